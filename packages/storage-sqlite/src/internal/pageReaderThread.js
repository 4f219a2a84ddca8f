// @ts-check
import { parentPort, workerData } from "node:worker_threads"
import Database from "better-sqlite3"
import { entriesAfter, renderEntry } from "@dashstream/core/entryBlocks"

// The page reader's thread (see `pageReader.ts`), a module of its own that `new Worker` runs: one read-only
// connection, one prepared statement (`BlockSql.from`, the same SQL the event-loop path runs, passed in `workerData`), one
// page per message, answered in order.
//
// Why JavaScript (type-checked from its JSDoc by `tsc`, `checkJs`): a worker thread's module is loaded by node
// itself, which runs no TypeScript on Node 20, and this file runs as it is wherever `PageReader` runs: from the
// sources (the tests), from `dist/` (`tsc -b` emits it beside `pageReader.js`) and from the `dashstream` command's
// bundle (packages/server/scripts/bundle.mjs makes it an entry point of its own, beside the chunks).

/**
 * What the thread is started with (`workerData`).
 * @typedef {object} ThreadData
 * @property {string} filename The database file.
 * @property {number} busyTimeoutMillis The connection's busy timeout, milliseconds.
 * @property {string} sql The blocks statement (`BlockSql.from`): parameters stream, after (microseconds).
 */

/**
 * A page asked of the thread: entries of `stream` with `ts` > `after` (microseconds), at most `limit`.
 * @typedef {object} PageRequest
 * @property {number} id
 * @property {number} stream
 * @property {number} after
 * @property {number} limit
 */

/**
 * A page as the thread sends it: the elements joined, their count and the last one (for its `ts`); or the error.
 * @typedef {object} PageReply
 * @property {number} id
 * @property {string} [text]
 * @property {number} [count]
 * @property {string | null} [last]
 * @property {{ message: string, code: string | undefined }} [error]
 */

if (parentPort === null) throw new Error("pageReaderThread.js is run by PageReader as a worker thread, not imported")
const port = parentPort
const { filename, busyTimeoutMillis, sql } = /** @type {ThreadData} */ (workerData)
const db = new Database(filename, { readonly: true, fileMustExist: true, timeout: busyTimeoutMillis })
const page = db.prepare(sql).pluck(true)

port.on("message", (/** @type {PageRequest} */ { id, stream, after, limit }) => {
  /** @type {PageReply} */
  let reply
  try {
    const elements = entriesAfter(
      /** @type {Iterable<Buffer>} */ (page.iterate(stream, stream, after, after)),
      after,
      limit,
      renderEntry
    )
    reply = {
      id,
      text: elements.join(","),
      count: elements.length,
      last: elements.length === 0 ? null : /** @type {string} */ (elements[elements.length - 1])
    }
  } catch (error) {
    const { message, code } = /** @type {{ message?: unknown, code?: unknown }} */ (error)
    reply = { id, error: { message: String(message), code: typeof code === "string" ? code : undefined } }
  }
  port.postMessage(reply)
})
