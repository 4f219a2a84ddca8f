import { Effect, Option, ParseResult, type Schema, SchemaAST } from "effect"

/**
 * Decode errors that stay small whatever the input. effect's formatters print the value that
 * failed (`Expected string, actual <value>`) in full and by recursion: a request body nested 5,000 levels deep
 * overflowed the stack while the error was being formatted (a 500 instead of a 400), and a 100,000-element array
 * was echoed whole in the error message. {@link withBoundedIssues} makes a schema's decode failures carry a short
 * preview of each failing value instead, so any formatter prints a bounded message.
 */

/** The longest preview of a failing value, in UTF-16 units, before it is cut with `…`. */
const MAX_PREVIEW = 60

/** How many levels of arrays and objects a preview opens. */
const PREVIEW_DEPTH = 2

/** How many elements or properties of one array or object a preview shows. */
const PREVIEW_ITEMS = 3

const cut = (text: string): string => (text.length > MAX_PREVIEW ? `${text.slice(0, MAX_PREVIEW - 1)}…` : text)

/** A bounded, JSON-like text of `value`: at most {@link PREVIEW_DEPTH} levels and a few items of each. */
const previewText = (value: unknown, depth: number): string => {
  if (typeof value === "string") return JSON.stringify(value.length > MAX_PREVIEW ? value.slice(0, MAX_PREVIEW) : value)
  if (typeof value !== "object" || value === null) return String(value)
  if (Array.isArray(value)) {
    if (depth >= PREVIEW_DEPTH) return value.length === 0 ? "[]" : "[…]"
    const shown = value.slice(0, PREVIEW_ITEMS).map((item) => previewText(item, depth + 1))
    return `[${shown.join(",")}${value.length > PREVIEW_ITEMS ? ",…" : ""}]`
  }
  const keys = Object.keys(value)
  if (depth >= PREVIEW_DEPTH) return keys.length === 0 ? "{}" : "{…}"
  const shown = keys
    .slice(0, PREVIEW_ITEMS)
    .map((key) => `${JSON.stringify(cut(key))}:${previewText((value as Record<string, unknown>)[key], depth + 1)}`)
  return `{${shown.join(",")}${keys.length > PREVIEW_ITEMS ? ",…" : ""}}`
}

/** Stands for a failing value in an issue: effect's formatters print a value with its own `toString` as that text. */
class Preview {
  constructor(private readonly text: string) {}
  toString(): string {
    return this.text
  }
}

/** `value` as an issue may carry it: primitives other than long strings as they are, anything else a {@link Preview}. */
const bounded = (value: unknown): unknown =>
  (typeof value === "object" && value !== null) || (typeof value === "string" && value.length > MAX_PREVIEW)
    ? new Preview(cut(previewText(value, 0)))
    : value

/**
 * `issue` with every value it carries replaced by a bounded preview. The tree of issues follows the schema, not the
 * input, so this recursion is as deep as the schema is.
 */
const boundIssue = (issue: ParseResult.ParseIssue): ParseResult.ParseIssue => {
  switch (issue._tag) {
    case "Type":
      return new ParseResult.Type(issue.ast, bounded(issue.actual), issue.message)
    case "Forbidden":
      return new ParseResult.Forbidden(issue.ast, bounded(issue.actual), issue.message)
    case "Unexpected":
      return new ParseResult.Unexpected(bounded(issue.actual), issue.message)
    case "Missing":
      return issue
    case "Pointer":
      return new ParseResult.Pointer(issue.path, bounded(issue.actual), boundIssue(issue.issue))
    case "Refinement":
      return new ParseResult.Refinement(issue.ast, bounded(issue.actual), issue.kind, boundIssue(issue.issue))
    case "Transformation":
      return new ParseResult.Transformation(issue.ast, bounded(issue.actual), issue.kind, boundIssue(issue.issue))
    case "Composite": {
      const issues = Array.isArray(issue.issues)
        ? (issue.issues.map(boundIssue) as unknown as ParseResult.SingleOrNonEmpty<ParseResult.ParseIssue>)
        : boundIssue(issue.issues as ParseResult.ParseIssue)
      return new ParseResult.Composite(issue.ast, bounded(issue.actual), issues)
    }
  }
}

/**
 * `schema`, whose decode failures carry bounded previews of the values that failed (see the module comment): its
 * error messages stay short (`Expected string, actual [[…]]`) and formatting them never recurses into the input.
 * Decoding that succeeds, encoding and the JSON Schema (identifier included) are unchanged. Use it on every schema
 * that decodes a request body or a file.
 */
export const withBoundedIssues = <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, I, R> =>
  schema.annotations({
    // effect drops the identifier of an annotated schema; the OpenAPI document names the body by it.
    ...Option.match(SchemaAST.getIdentifierAnnotation(schema.ast), {
      onNone: () => ({}),
      onSome: (identifier) => ({ identifier })
    }),
    decodingFallback: (issue) => Effect.fail(boundIssue(issue))
  })
