// @ts-check
import { parentPort, workerData } from "node:worker_threads"
import { parseLineProtocol } from "@dashstream/core/lineProtocol"
import { lineProtocolBodyText } from "./lineProtocolBody.js"

// The line protocol thread (see `lineProtocolParser.ts`), a module of its own that `new Worker` runs: each message is
// one body's bytes, answered with its parsed batch (issue 26: parsing took a fifth of the event loop's time on
// 1,000-line bodies). Bodies are answered in the order sent.
//
// Why JavaScript (type-checked from its JSDoc by `tsc`, `checkJs`): a worker thread's module is loaded by node
// itself, which runs no TypeScript on Node 20, and this file runs as it is wherever the parser runs: from the sources
// (the tests; `@dashstream/core/lineProtocol` then resolves to core's `dist/`, or to its source under `tsx`), from
// `dist/` and from the `dashstream` command's bundle (packages/server/scripts/bundle.mjs makes it an entry point of
// its own, beside the chunks).

/**
 * What the thread is started with (`workerData`): `parsed[0]` counts the bodies it has parsed (answered or refused),
 * shared with the event loop, which sends a body to the thread only while few are unparsed.
 * @typedef {object} ThreadData
 * @property {Int32Array} parsed
 */

/**
 * A body asked of the thread: its bytes as received, its `Content-Encoding` header, the precision of its timestamps,
 * and the limits (contract section 13.1): bytes once inflated, field values.
 * @typedef {object} ParseRequest
 * @property {number} id
 * @property {Uint8Array} bytes
 * @property {string | undefined} encoding
 * @property {import("@dashstream/core/lineProtocol").Precision} precision
 * @property {number} maxBytes
 * @property {number} maxFieldValues
 */

/**
 * The thread's answer: the batch (`LineBatch.toTransfer`), the body's refusal (`lineProtocolBodyText`), the
 * parser's refusal (`InvalidRequest` or `PayloadTooLarge`, as tag, message and path), or an unexpected failure.
 * @typedef {object} ParseReply
 * @property {number} id
 * @property {import("@dashstream/core/lineProtocol").LineBatchTransfer} [batch]
 * @property {import("./lineProtocolBody.js").BodyRefusal} [refused]
 * @property {{ tag: string, message: string, path: string | undefined }} [error]
 * @property {string} [failure]
 */

if (parentPort === null) throw new Error("lineProtocolThread.js is run by LineProtocolParser as a worker thread")
const port = parentPort
const { parsed: parsedCount } = /** @type {ThreadData} */ (workerData)

port.on("message", (/** @type {ParseRequest} */ request) => {
  try {
    answer(request)
  } finally {
    Atomics.add(parsedCount, 0, 1)
  }
})

/**
 * Parses one body and posts the answer.
 * @param {ParseRequest} request
 */
const answer = ({ id, bytes, encoding, precision, maxBytes, maxFieldValues }) => {
  try {
    const text = lineProtocolBodyText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), encoding, maxBytes)
    if (typeof text !== "string") return port.postMessage(/** @type {ParseReply} */ ({ id, refused: text }))
    const parsed = parseLineProtocol(text, { precision, maxFieldValues })
    if (parsed._tag === "Left") {
      const { _tag: tag, message } = parsed.left
      const path = "path" in parsed.left ? parsed.left.path : undefined
      return port.postMessage(/** @type {ParseReply} */ ({ id, error: { tag, message, path } }))
    }
    const { value, transfer } = parsed.right.toTransfer()
    port.postMessage(/** @type {ParseReply} */ ({ id, batch: value }), transfer)
  } catch (error) {
    port.postMessage(/** @type {ParseReply} */ ({ id, failure: String(/** @type {Error} */ (error)?.stack ?? error) }))
  }
}

// Modules loaded: bodies may come (until then the event loop parses them itself).
port.postMessage("ready")
