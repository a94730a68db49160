/** What the Users, Credits and Settings pages share: an answer loaded for a page, and an action with its error. */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Answer<T> {
  /** The last answer (kept while a new one loads or fails); null before the first. */
  readonly value: T | null;
  /** Why the last load failed; null when it did not. */
  readonly error: unknown;
  /** Replaces the value, as an answer would (the page changed it); a load still running is older, and stopped. */
  readonly set: (value: T) => void;
}

/** `load` run whenever `deps` change, stopped when they change again or the page goes. */
export function useAnswer<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): Answer<T> {
  const [state, setState] = useState<{ value: T | null; error: unknown }>({ value: null, error: null });
  const running = useRef<AbortController | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    running.current = controller;
    load(controller.signal).then(
      (value) => {
        if (!controller.signal.aborted) setState({ value, error: null });
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setState((current) => ({ value: current.value, error }));
      },
    );
    return () => controller.abort();
  }, deps);
  const set = (value: T) => {
    running.current?.abort();
    setState({ value, error: null });
  };
  return { ...state, set };
}

export interface Action {
  readonly busy: boolean;
  readonly error: unknown;
  readonly setError: (error: unknown) => void;
  /** Runs `work`, busy meanwhile; what it throws becomes `error`. */
  readonly run: (work: () => Promise<void>) => Promise<void>;
}

/** A button's work: one at a time, its failure kept to show. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
