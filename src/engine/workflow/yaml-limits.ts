/**
 * Limits on YAML phasebridge parses (workflows, the config file): the `yaml` package recurses
 * per nesting level, so a deeply nested file would exhaust the stack. The text is scanned for
 * its nesting depth first (flow brackets and block indentation), without loading the parser.
 */

/** Deepest nesting accepted (a workflow or config needs under ten levels). */
export const MAX_YAML_DEPTH = 64;
/** Most alias expansions accepted (an alias bomb needs millions). */
export const MAX_YAML_ALIASES = 100;

/**
 * Why `text` nests deeper than `maxDepth`, or null. Counts flow brackets outside quotes and the
 * block nesting (indentation changes and `- ` markers) line by line; comments are skipped.
 */
export function yamlDepthProblem(text: string, maxDepth: number = MAX_YAML_DEPTH): string | null {
  let flow = 0;
  let deepest = 0;
  let at = 0;
  const indents: number[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    let col = 0;
    while (col < line.length && (line[col] === ' ' || line[col] === '-' || line[col] === '\t')) {
      col++;
    }
    if (flow === 0 && col < line.length && line[col] !== '#') {
      while (indents.length > 0 && indents.at(-1)! >= col) indents.pop();
      indents.push(col);
      const dashes = line.slice(0, col).split('-').length - 1;
      const depth = indents.length + dashes;
      if (depth > deepest) [deepest, at] = [depth, index + 1];
    }
    let quote: string | null = null;
    for (let i = col; i < line.length; i++) {
      const c = line[i]!;
      if (quote !== null) {
        if (c === quote) quote = null;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '#' && (i === 0 || line[i - 1] === ' ')) break;
      else if (c === '[' || c === '{') {
        flow++;
        if (indents.length + flow > deepest) [deepest, at] = [indents.length + flow, index + 1];
      } else if ((c === ']' || c === '}') && flow > 0) flow--;
    }
    if (deepest > maxDepth) {
      return `it nests more than ${maxDepth} levels deep (at line ${at}): flatten it`;
    }
  }
  return null;
}

/** A parser error turned into one line: the first message's first line, and how many more. */
export function oneYamlError(messages: readonly string[]): string {
  const first = (messages[0] ?? 'unreadable YAML').split('\n')[0]!.replace(/:$/, '');
  const more = messages.length > 1 ? ` (and ${messages.length - 1} more)` : '';
  return `${first}${more}`;
}
