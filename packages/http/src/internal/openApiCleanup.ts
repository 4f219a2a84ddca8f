/**
 * `HttpApi.make` declares the platform's `HttpApiDecodeError` (400, `{_tag, issues, message}`) on every API. This
 * server answers those decode failures with the contract's error body instead (400 `invalid_request`), so the
 * generated document is corrected to say so: every 400 that mentions `HttpApiDecodeError` describes
 * `ErrorResponse`, operations that take no input lose the 400 they cannot produce, and the platform's schemas are
 * dropped from the components. The InfluxDB writes keep their own 400 body alone (see `ownErrorShapes`).
 */

type Json = Record<string, any>

const decodeErrorRef = "#/components/schemas/HttpApiDecodeError"
const errorResponseRef = "#/components/schemas/ErrorResponse"
const platformSchemas = ["HttpApiDecodeError", "Issue", "PropertyKey"]

const isDecodeErrorRef = (schema: Json | undefined): boolean => schema?.["$ref"] === decodeErrorRef

const describesErrorResponse = (schema: Json): boolean =>
  schema["$ref"] === errorResponseRef ||
  (Array.isArray(schema["allOf"]) && schema["allOf"].length === 1 && schema["allOf"][0]?.["$ref"] === errorResponseRef)

const withInvalidRequest = (description: string | undefined): string => {
  const codes = (description ?? "").split(", ").filter((code) => /^[a-z_]+$/.test(code))
  if (!codes.includes("invalid_request")) codes.push("invalid_request")
  return codes.join(", ")
}

/**
 * Operations answered by the ingest lane in their protocol's own error shape (the InfluxDB writes, docs/api.md section 13.1):
 * the platform never decodes their requests, so their 400 is only their own body.
 */
const ownErrorShapes: ReadonlySet<string> = new Set(["influxWriteV1", "influxWriteV2"])

const fixOperation = (op: Json): void => {
  const response: Json | undefined = op["responses"]?.["400"]
  const media: Json | undefined = response?.["content"]?.["application/json"]
  if (response === undefined || media === undefined) return
  const schema: Json = media["schema"]
  if (ownErrorShapes.has(op["operationId"]) && Array.isArray(schema["anyOf"])) {
    const own: Array<Json> = schema["anyOf"].filter((member: Json) => !isDecodeErrorRef(member))
    media["schema"] = own.length === 1 ? own[0] : { anyOf: own }
    response["description"] = own[0]?.["description"] ?? response["description"]
    return
  }
  if (isDecodeErrorRef(schema)) {
    const takesInput = (op["parameters"]?.length ?? 0) > 0 || op["requestBody"] !== undefined
    if (!takesInput) {
      delete op["responses"]["400"]
      return
    }
    media["schema"] = { $ref: errorResponseRef }
    response["description"] = "invalid_request"
    return
  }
  if (Array.isArray(schema["anyOf"]) && schema["anyOf"].some(isDecodeErrorRef)) {
    const others: Array<Json> = schema["anyOf"].filter((member: Json) => !isDecodeErrorRef(member))
    if (others.every(describesErrorResponse)) {
      media["schema"] = { $ref: errorResponseRef }
      response["description"] = withInvalidRequest(others.map((member) => member["description"]).join(", "))
    } else {
      schema["anyOf"] = [...others, { $ref: errorResponseRef }]
    }
  }
}

/** The OpenAPI transform (an `OpenApi.Transform` annotation of the API); mutates and returns `spec`. */
export const cleanDecodeErrors = (spec: Json): Json => {
  for (const path of Object.values<Json>(spec["paths"] ?? {})) {
    for (const op of Object.values<Json>(path)) fixOperation(op)
  }
  const text = JSON.stringify(spec["paths"])
  const schemas: Json = spec["components"]?.["schemas"] ?? {}
  const stillUsed = (name: string) =>
    text.includes(`"#/components/schemas/${name}"`) ||
    Object.entries(schemas).some(
      ([other, schema]) => !platformSchemas.includes(other) && JSON.stringify(schema).includes(`/${name}"`)
    )
  for (const name of platformSchemas) {
    if (!stillUsed(name)) delete schemas[name]
  }
  return spec
}
