import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"

/**
 * The import circles among the TypeScript files under `dirs`: each circle is the list of its files (relative to
 * `root`), smallest first, none listed twice. Every kind of import counts: static and dynamic (`import()`), type-only
 * (`import type`) and re-exports (`export ... from`), since each ties the modules' designs together even when it
 * vanishes from the JavaScript. Imports are read and resolved by TypeScript itself (`preProcessFile`,
 * `resolveModuleName` with the repository's compiler options), so `./x.js` finds `./x.ts`; imports of other
 * packages or of files outside `dirs` are not followed (the packages' own dependencies cannot circle: pnpm and
 * `tsc -b` refuse that).
 */
export const importCycles = (root: string, dirs: ReadonlyArray<string>): Array<Array<string>> => {
  const options = compilerOptions(root)
  const files = dirs.flatMap((dir) =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
      .map((entry) => join(entry.parentPath, entry.name))
  )
  const known = new Set(files)
  const edges = new Map<string, Array<string>>()
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true)
    const targets = new Set<string>()
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith(".")) continue
      const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule?.resolvedFileName
      if (resolved === undefined) throw new Error(`${relative(root, file)}: cannot resolve import "${fileName}"`)
      if (known.has(resolved)) targets.add(resolved)
    }
    edges.set(file, [...targets])
  }
  return stronglyConnected(files, edges)
    .filter((component) => component.length > 1 || (edges.get(component[0]!) ?? []).includes(component[0]!))
    .map((component) => component.map((file) => relative(root, file)).sort())
    .sort((a, b) => a.length - b.length || a[0]!.localeCompare(b[0]!))
}

const compilerOptions = (root: string): ts.CompilerOptions => {
  const path = join(root, "tsconfig.base.json")
  const { config, error } = ts.readConfigFile(path, ts.sys.readFile)
  if (error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"))
  return ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, path).options
}

// Tarjan's algorithm, iterative (no recursion depth limit): the strongly connected components of the graph.
const stronglyConnected = (nodes: ReadonlyArray<string>, edges: ReadonlyMap<string, ReadonlyArray<string>>) => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: Array<string> = []
  const components: Array<Array<string>> = []
  let next = 0
  for (const start of nodes) {
    if (index.has(start)) continue
    const work: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }]
    index.set(start, next)
    low.set(start, next++)
    stack.push(start)
    onStack.add(start)
    while (work.length > 0) {
      const frame = work[work.length - 1]!
      const targets = edges.get(frame.node) ?? []
      if (frame.edge < targets.length) {
        const target = targets[frame.edge++]!
        if (!index.has(target)) {
          index.set(target, next)
          low.set(target, next++)
          stack.push(target)
          onStack.add(target)
          work.push({ node: target, edge: 0 })
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!))
        }
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!))
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: Array<string> = []
        let member: string
        do {
          member = stack.pop()!
          onStack.delete(member)
          component.push(member)
        } while (member !== frame.node)
        components.push(component)
      }
    }
  }
  return components
}
