/**
 * One person on several platforms (issue 36). `link` on one identity gives a one-time code
 * (hashed in bridge.db, 10 minutes, one use); `link <code>` from another identity claims it; the
 * first identity is told and answers `link confirm` (or `link cancel`). Only then are the two one
 * person: quorum, four-eyes and the audit count and name the person. Both sides confirm, so a code
 * seen by someone else links nothing without its issuer's word. Linking grants no role. The chat
 * verb and `phasebridge link` (as `cli:<os user>`) share this module, and so their words.
 */
import { randomInt } from 'node:crypto';
import type { LinkedPerson, LinkParty, Repositories } from '../db/repositories/index.ts';
import { hashPairingCode } from '../db/repositories/pairing.ts';
import { personName } from '../engine/person-name.ts';

/** How long a link code may be claimed and then confirmed. */
export const LINK_TTL_MS = 10 * 60 * 1000;

/** Letters and digits that cannot be confused when read or typed (as pairing codes). */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 10;

/** What one link step did: the answer, an audit detail, and who else to tell, where. */
export interface LinkOutcome {
  readonly ok: boolean;
  readonly words: string;
  readonly detail: string;
  /** The other side's chat and what it hears (absent: none, or the CLI). */
  readonly tell?: { readonly chat: string; readonly words: string };
}

type Repos = Pick<Repositories, 'personLinks' | 'people'>;

const HOW_TO_SEND =
  'Telegram /link, Slack /pb link, Discord /link, the console, or `phasebridge link` on the bridge’s host';

/** `link`: a fresh code for `me` (an earlier unconfirmed one stops working). */
export async function issueLink(repos: Repos, me: LinkParty, now: number): Promise<LinkOutcome> {
  const confirm =
    me.chat === undefined ? 'run `phasebridge link confirm`' : 'answer `link confirm` here';
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  await repos.personLinks.issueCode(hashPairingCode(code), me, now + LINK_TTL_MS);
  const minutes = LINK_TTL_MS / 60_000;
  return {
    ok: true,
    detail: 'link code issued',
    words: `Your link code: \`${code}\` (one use, valid ${minutes} minutes). From your account on another platform (${HOW_TO_SEND}), send \`link ${code}\`; then ${confirm}. Linking makes the accounts one person for votes and the audit; it grants no role.`,
  };
}

const CLAIM_REFUSED = {
  unknown:
    'That link code is not valid. Check it, or send `link` on your other account for a new one.',
  used: 'That link code was already used. Send `link` on your other account for a new one.',
  expired: `That link code has expired (codes last ${LINK_TTL_MS / 60_000} minutes). Send \`link\` on your other account for a new one.`,
  self: 'That link code is your own: send it from your account on another platform.',
} as const;

/** `link <code>` from `me`: claims another identity's code; its issuer is asked to confirm. */
export async function claimLink(repos: Repos, me: LinkParty, code: string): Promise<LinkOutcome> {
  const claimed = await repos.personLinks.claimCode(hashPairingCode(code), me);
  if (!claimed.ok) {
    return {
      ok: false,
      detail: `link code ${claimed.problem}`,
      words: CLAIM_REFUSED[claimed.problem],
    };
  }
  const { issuer } = claimed.code;
  const mine = await repos.personLinks.personOf(me.id);
  if (mine?.identities.includes(issuer.id)) {
    await repos.personLinks.spendCode(claimed.code.codeHash, 0);
    return {
      ok: true,
      detail: `already one person with ${issuer.id}`,
      words: `You and ${await identityWords(repos, issuer.id)} are one person already.`,
    };
  }
  const where = issuer.chat === undefined ? 'with `phasebridge link confirm`' : 'there';
  const minutes = LINK_TTL_MS / 60_000;
  return {
    ok: true,
    detail: `claimed the link code of ${issuer.id}`,
    words: `Code accepted. To finish, ${personName(issuer)} confirms on ${platformOf(issuer.id)}: send \`link confirm\` ${where} (within the code's ${minutes} minutes).`,
    ...(issuer.chat !== undefined && {
      tell: {
        chat: issuer.chat,
        words: `${await identityWords(repos, me.id, me.name)} sent your link code. Send \`link confirm\` to become one person with that account, or \`link cancel\` if it is not you.`,
      },
    }),
  };
}

/** `link confirm` / `link cancel` from the issuer of a claimed code. */
export async function answerLink(
  repos: Repos,
  me: LinkParty,
  step: 'confirm' | 'cancel',
  now: number,
): Promise<LinkOutcome> {
  const pending = await repos.personLinks.claimedCodeOf(me.id);
  const claimant = pending?.claimant;
  if (!pending || !claimant) {
    return {
      ok: false,
      detail: `nothing to ${step}`,
      words: `No link to ${step}: nobody has sent your code yet. Send \`link\` for a code, then send it from your other account.`,
    };
  }
  const who = await identityWords(repos, claimant.id, claimant.name);
  if (step === 'cancel') {
    await repos.personLinks.spendCode(pending.codeHash, 0);
    return {
      ok: true,
      detail: `link with ${claimant.id} cancelled`,
      words: `Link cancelled: ${who} was not linked to you.`,
      ...(claimant.chat !== undefined && {
        tell: { chat: claimant.chat, words: 'The link was cancelled by the code’s owner.' },
      }),
    };
  }
  if (!(await repos.personLinks.spendCode(pending.codeHash, now))) {
    return {
      ok: false,
      detail: 'link code expired before confirmation',
      words: `The code ${who} sent has expired (codes last ${LINK_TTL_MS / 60_000} minutes). Send \`link\` for a new one.`,
    };
  }
  const person = await repos.personLinks.link(me, claimant);
  const all = await personWords(repos, person);
  const words = `Linked: ${all} are one person now, ${person.name}. Votes, four-eyes and the audit count you once; your roles stay per chat.`;
  return {
    ok: true,
    detail: `linked ${me.id} and ${claimant.id} as ${person.personId}`,
    words,
    ...(claimant.chat !== undefined && { tell: { chat: claimant.chat, words } }),
  };
}

/** `platform name (id)`, e.g. `slack @bob (slack:U02)`, with the name people know. */
export async function identityWords(repos: Repos, id: string, name?: string): Promise<string> {
  // The platform's own name (people's lookup would give a linked identity its person's name).
  const known = name ?? (await repos.people.platformName(id));
  const shown = personName({ id, ...(known !== undefined && { name: known }) });
  return shown === id || shown === id.slice(id.indexOf(':') + 1)
    ? id
    : `${platformOf(id)} ${shown} (${id})`;
}

/** A person's identities in words, in the order they joined (each with its platform name). */
export async function personWords(repos: Repos, person: LinkedPerson): Promise<string> {
  const words = await Promise.all(person.identities.map((id) => identityWords(repos, id)));
  return listWords(words);
}

function listWords(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? 'nobody';
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function platformOf(id: string): string {
  const p = id.slice(0, id.indexOf(':'));
  return p === 'cli' ? 'the command line' : p === 'web' ? 'the console' : p;
}
