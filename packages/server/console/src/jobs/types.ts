/** The shapes of the REST interface's jobs, as the console reads them. */

export interface JobOverview {
  readonly id: string;
  readonly status: 'InProgress' | 'Completed' | 'Deleted' | 'Expired';
  readonly name?: string;
  readonly owner: string;
  readonly quality: string;
  readonly deduplication: string;
  readonly noOfEntries: number;
  readonly createdOn: string;
  readonly completedOn?: string;
  readonly priority?: number;
  readonly retention: string;
  readonly progress?: { readonly percentage: number; readonly estimatedTimeRemaining?: string };
}

export interface JobEntry {
  readonly index: number;
  readonly inputData: string;
  readonly classification: string;
  readonly status: string;
  readonly emailAddress?: string;
  readonly isDisposableEmailAddress?: boolean;
  readonly isRoleAccount?: boolean;
  readonly isFreeEmailAddress?: boolean;
  readonly suggestions?: readonly string[];
  readonly duplicateOf?: number;
  readonly custom?: string;
}

export interface Paged<T> {
  readonly meta?: { readonly isTruncated?: boolean; readonly cursor?: string };
  readonly data: readonly T[];
}

export interface QualityLevel {
  readonly id: string;
  readonly displayName: string;
  readonly isDefault: boolean;
  readonly isCustom: boolean;
}
