import { RpmlabError } from "../core/errors.ts";

/**
 * `parse()`, its RpmlabError prefixed with `source` (--store, $RPMLAB_BROKER…) when given: "invalid
 * store" alone does not say which flag or variable to fix, and a bad variable in a CI job's
 * environment is not something the command line shows.
 */
export function fromSource<T>(source: string | undefined, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (source === undefined || !(error instanceof RpmlabError)) throw error;
    throw new RpmlabError(
      error.code,
      `${source}: ${error.message}`,
      { ...error.details, source },
      error.cause,
    );
  }
}
