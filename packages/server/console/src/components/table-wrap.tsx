import type { ComponentChildren } from 'preact';

/**
 * A wide table, scrolled sideways on a narrow screen: the scrolling box takes the focus, so that keyboard users can
 * scroll it too, and is named after its table.
 */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
