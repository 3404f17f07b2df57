/** `1 Collector`, `2 Collectors`: a count with its noun in agreement (`many` for irregular plurals). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
