import { existsSync, readdirSync, statSync } from "node:fs"
import { join, resolve } from "node:path"

/** The repository root. */
export const repoRoot = resolve(import.meta.dirname, "..")

const newest = (dir: string, skip: (path: string) => boolean): { path: string; mtimeMs: number } | undefined => {
  let found: { path: string; mtimeMs: number } | undefined
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    if (!entry.isFile() || skip(path)) continue
    const { mtimeMs } = statSync(path)
    if (found === undefined || mtimeMs > found.mtimeMs) found = { path, mtimeMs }
  }
  return found
}

/**
 * Throws unless every package's `dist/` (and the dashboard page's `bundle/`) was built from its source as it is now:
 * no file under a package's `src/` is newer than what `pnpm build` last wrote for it (`dist/.tsbuildinfo`, which
 * `tsc -b` rewrites or touches on every build, `bundle/manifest.json`, and the `dashstream` command's
 * `packages/server/bundle/bin.js`, which holds every package). For the tests that run the build rather
 * than the source (the README's commands, the packed tarballs): they fail loudly, never test a stale build.
 * `pnpm test` runs `pnpm build` first, so they pass there.
 */
export const assertBuilt = (): void => {
  const stale: Array<string> = []
  // Each output against the newest file under `sources` (walked once for all of them).
  const check = (outputs: ReadonlyArray<string>, sources: string, skip: (path: string) => boolean = () => false) => {
    const input = newest(sources, skip)
    for (const output of outputs) {
      const built = existsSync(output) ? statSync(output).mtimeMs : -1
      if (built < 0) stale.push(`${output} is missing`)
      else if (input !== undefined && input.mtimeMs > built) stale.push(`${input.path} is newer than ${output}`)
    }
  }
  const packages = join(repoRoot, "packages")
  const command = join(packages, "server/bundle/bin.js")
  for (const name of readdirSync(packages)) {
    const dir = join(packages, name)
    if (!existsSync(join(dir, "tsconfig.build.json"))) continue
    // The `dashstream` command's bundle holds every package's compiled source.
    check([join(dir, "dist/.tsbuildinfo"), command], join(dir, "src"), (path) => path.includes("/src/browser/"))
  }
  const web = join(packages, "dashboard-web")
  check([join(web, "bundle/manifest.json")], join(web, "src/browser"))
  if (stale.length > 0) {
    throw new Error(`The build is out of date; run \`pnpm build\` (pnpm test does it first):\n  ${stale.join("\n  ")}`)
  }
}
