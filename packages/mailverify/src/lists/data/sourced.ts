/** A group of list entries and where they come from: every entry of the in-repo tables has a source. */
export interface Sourced {
  readonly names: readonly string[];
  /** Where the entries can be checked: an RFC section, the provider's own documentation, a dated observation. */
  readonly source: string;
  /** Why the group is in, or what it deliberately leaves out. */
  readonly note?: string;
}

export function namesOf(groups: readonly Sourced[]): string[] {
  return groups.flatMap((group) => group.names);
}
