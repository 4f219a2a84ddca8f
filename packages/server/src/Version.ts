import { readFileSync } from "node:fs"

/**
 * The version of `@dashstream/server`, read from its `package.json` (one directory above this file, whether it runs
 * from `src/`, a build's `dist/` or the command's `bundle/`). What `dashstream --version` prints.
 */
export const version = (): string =>
  (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version
