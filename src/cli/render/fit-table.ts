/**
 * A table within a terminal's width: columns as wide as their widest cell, two spaces apart; when
 * the whole is wider than `width`, the columns named shrinkable give up room, the widest first,
 * down to their minimum, and their cells are cut with `…`. Other columns (ids, builds, states,
 * times) are never cut: they are what a reader copies into a command.
 */

export interface FitColumn {
  title: string;
  /** May be cut to fit (default false). */
  shrink?: boolean;
  /** The narrowest a shrinkable column gets (default its title's length, at least 4). */
  min?: number;
}

/** `text` cut to `width` columns with `…` when longer. */
export function cut(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? text.slice(0, width) : `${text.slice(0, width - 1)}…`;
}

/** The lines of the table (header first), no trailing spaces; `width` undefined: nothing cut. */
export function fitTable(
  columns: readonly FitColumn[],
  rows: readonly (readonly string[])[],
  width: number | undefined,
): string[] {
  const widths = columns.map((c, i) => Math.max(c.title.length, ...rows.map((r) => (r[i] ?? '').length)));
  if (width !== undefined) {
    const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (columns.length - 1);
    const floor = (i: number) => {
      const c = columns[i] as FitColumn;
      return c.min ?? Math.max(4, c.title.length);
    };
    while (total() > width) {
      let widest = -1;
      for (const [i, c] of columns.entries())
        if (
          c.shrink &&
          (widths[i] as number) > floor(i) &&
          (widest < 0 || (widths[i] as number) > (widths[widest] as number))
        )
          widest = i;
      if (widest < 0) break;
      widths[widest] = (widths[widest] as number) - 1;
    }
  }
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cut(cell, widths[i] as number).padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.title)), ...rows.map(line)];
}
