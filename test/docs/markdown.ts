/**
 * Just enough Markdown reading for the docs check: code spans and fenced blocks apart from prose,
 * relative links, and GitHub's heading anchors.
 */

/** A fenced code block: its info string (`sh`, `yaml`, or empty) and its lines. */
export interface Fence {
  readonly lang: string;
  readonly lines: readonly string[];
}

/** The text split into prose (fences blanked, so line numbers hold) and its fenced blocks. */
export function splitFences(text: string): { prose: string; fences: Fence[] } {
  const fences: Fence[] = [];
  const prose: string[] = [];
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s*```\s*([\w-]*)/.exec(line);
    if (marker && open === undefined) {
      open = { lang: marker[1] ?? '', lines: [] };
      prose.push('');
    } else if (marker && open !== undefined) {
      fences.push(open);
      open = undefined;
      prose.push('');
    } else {
      open?.lines.push(line);
      prose.push(open === undefined ? line : '');
    }
  }
  return { prose: prose.join('\n'), fences };
}

/** The contents of every inline code span of `prose`. */
export function codeSpans(prose: string): string[] {
  return [...prose.matchAll(/(`+)([^`]+?)\1/g)].map((m) => m[2]!);
}

/** Prose without its code spans (a link inside one is an example, not a link). */
export function withoutCodeSpans(prose: string): string {
  return prose.replace(/(`+)[^`]+?\1/g, '');
}

/** Targets of the inline links and images of `prose` that point inside the repository. */
export function relativeLinks(prose: string): string[] {
  const targets = [...withoutCodeSpans(prose).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)];
  return targets.map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** GitHub's anchors of every heading of a Markdown file (duplicates get -1, -2, …). */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of splitFences(text).prose.split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** A heading's anchor as GitHub makes it: link text kept, punctuation dropped, spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
