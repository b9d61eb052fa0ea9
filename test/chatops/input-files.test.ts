/** Checks of attached files: size, extension allowlist, content sniffing and name sanitising. */
import { describe, expect, it } from 'vitest';
import {
  checkInput,
  refuseBeforeDownload,
  sanitiseName,
  uniqueNames,
} from '../../src/chatops/input-files.ts';

const LIMITS = { maxBytes: 100, maxFiles: 2 };
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
const PDF = Buffer.from('%PDF-1.7\n');

describe('attached file checks', () => {
  it('accepts content that matches its extension', () => {
    expect(checkInput('shot.PNG', PNG, LIMITS, 'f')).toMatchObject({
      name: 'shot.PNG',
      kind: 'image',
    });
    expect(checkInput('spec.pdf', PDF, LIMITS, 'f')).toMatchObject({ kind: 'pdf' });
    expect(checkInput('notes.md', Buffer.from('# héllo\n'), LIMITS, 'f')).toMatchObject({
      kind: 'text',
    });
  });

  it('refuses a type outside the allowlist, and content that lies about its type', () => {
    expect(checkInput('run.sh', Buffer.from('echo'), LIMITS, 'f')).toMatch(/not an accepted type/);
    expect(checkInput('archive.zip', Buffer.from('PK\x03\x04'), LIMITS, 'f')).toMatch(
      /not an accepted type/,
    );
    expect(checkInput('x.png', PDF, LIMITS, 'f')).toBe(
      'x.png is refused: its content is not a png image',
    );
    expect(checkInput('x.jpg', PNG, LIMITS, 'f')).toMatch(/not a jpg image/);
    expect(checkInput('x.pdf', PNG, LIMITS, 'f')).toMatch(/it is not a PDF/);
    expect(checkInput('x.txt', Buffer.from([0x61, 0, 0x62]), LIMITS, 'f')).toMatch(
      /not UTF-8 text/,
    );
    expect(checkInput('x.txt', Buffer.from([0xc3, 0x28]), LIMITS, 'f')).toMatch(/not UTF-8 text/);
  });

  it('refuses a file over the limit before and after download', () => {
    expect(refuseBeforeDownload('a.png', 101, LIMITS)).toBe(
      'a.png is 101 bytes, over the limit of 100 bytes per file',
    );
    expect(refuseBeforeDownload('a.png', undefined, LIMITS)).toBeUndefined();
    expect(checkInput('a.txt', Buffer.alloc(101, 0x61), LIMITS, 'f')).toMatch(/over the limit/);
  });

  it('sanitises names to a plain file name and keeps them unique', () => {
    expect(sanitiseName('../../etc/passwd.txt', 'f')).toBe('passwd.txt');
    expect(sanitiseName('C:\\Users\\me\\shot 1.png', 'f')).toBe('shot_1.png');
    expect(sanitiseName('.bashrc.txt', 'f')).toBe('bashrc.txt');
    expect(sanitiseName('-rf.txt', 'f')).toBe('rf.txt');
    expect(sanitiseName('..', 'file-1.txt')).toBe('file-1.txt');
    expect(sanitiseName(`${'a'.repeat(200)}.md`, 'f')).toHaveLength(80);
    const twice = uniqueNames([
      { name: 'a.png', kind: 'image', data: PNG },
      { name: 'A.png', kind: 'image', data: PNG },
    ]);
    expect(twice.map((f) => f.name)).toEqual(['a.png', 'A-2.png']);
  });
});
