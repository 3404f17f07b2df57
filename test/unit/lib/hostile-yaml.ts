/** YAML texts that attack a parser, shared by the yaml-source and policy tests. */

/** A billion-laughs document: `l0` lists ten strings, each next level lists the one before ten times. */
export function aliasBomb(levels: number): string {
  const lines = ['name: x', 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < levels; i++)
    lines.push(
      `l${i}: &l${i} [${Array(10)
        .fill(`*l${i - 1}`)
        .join(',')}]`,
    );
  return `${lines.join('\n')}\n`;
}
