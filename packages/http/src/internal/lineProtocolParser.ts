import { Worker } from "node:worker_threads"
import {
  InvalidRequest,
  LineBatch,
  lineProtocolLimits,
  PayloadTooLarge,
  parseLineProtocol,
  type Precision
} from "@dashstream/core"
import { Either } from "effect"
import { type BodyRefusal, lineProtocolBodyText } from "./lineProtocolBody.js"
import type { ParseReply, ParseRequest, ThreadData } from "./lineProtocolThread.js"

// The thread's module, beside this one in the sources, in dist/ and in the command's bundle.
const threadFile = new URL("./lineProtocolThread.js", import.meta.url)

/** How a body parsed: its batch, or why it is refused (400 `invalid_request`, 413 `payload_too_large`). */
export type ParsedLines = Either.Either<LineBatch, InvalidRequest | PayloadTooLarge>

/** The refusal of a body that has no text (see `lineProtocolBodyText`), as the contract's error (section 13.1). */
const bodyRefusal = (refusal: BodyRefusal, maxBytes: number): ParsedLines => {
  switch (refusal.refused) {
    case "too large":
      return Either.left(
        new PayloadTooLarge({ message: `the request body is larger than ${maxBytes} bytes after decompression` })
      )
    case "corrupt":
      return Either.left(new InvalidRequest({ message: "the request body is not valid gzip data" }))
    case "encoding":
      return Either.left(
        new InvalidRequest({
          message: `Content-Encoding ${JSON.stringify(refusal.encoding)} is not supported (only gzip)`
        })
      )
  }
}

/**
 * The server's {@link LineProtocolParserOptions.threadMinBytes}: bodies from 16 KiB (about 300 one-field lines) are
 * parsed on the thread. Measured with `bench/push` (`lp`, 1,000-line bodies of 50 KB): see docs/benchmarks.md.
 */
export const lineProtocolThreadMinBytes = 16 * 1024

/** Options of a {@link LineProtocolParser}. */
export interface LineProtocolParserOptions {
  /**
   * Bodies of at least this many bytes (as received) are parsed on the thread; smaller ones, whose trip to the thread
   * and back would cost about what their parse costs, on the event loop. `Infinity`: never a thread.
   */
  readonly threadMinBytes: number
  /** Called once if the thread fails (it could not start, or it died): every body is then parsed on the event loop. */
  readonly onThreadFailure?: ((error: Error) => void) | undefined
}

/**
 * Parses the bodies of the InfluxDB write routes (contract section 13.1) into line batches: large ones on a worker
 * thread of their own (`lineProtocolThread.js`), so that the event loop, which stores the batches, does not also
 * parse them (issue 26: the parser was a fifth of the event loop's time on 1,000-line bodies, while the machine's
 * second core stood half idle); small ones, and all of them while the thread starts, on the event loop. Either way a
 * body gets the same answer: inflated when gzip (at most `lineProtocolLimits.maxBytes`), decoded as UTF-8, parsed by
 * core's `parseLineProtocol`.
 *
 * The thread starts with the first large body and is shared by all requests; it parses one body at a time, in the
 * order sent. When {@link LineProtocolParser.maxWaiting} bodies sent to it are not parsed yet, the next is parsed on
 * the event loop (which then has nothing better to do). A thread that fails is logged once (`onThreadFailure`) and the bodies
 * waiting on it, and every later one, are parsed on the event loop: no body is lost. {@link close} ends the thread.
 */
export class LineProtocolParser {
  /** At most this many bodies wait on the thread to be parsed; more are parsed on the event loop. */
  static readonly maxWaiting = 16

  private worker: Worker | undefined = undefined
  // Whether the thread has loaded its modules (it says so once); until then bodies are parsed on the event loop.
  private ready = false
  private failed = false
  private closed = false
  private nextId = 0
  private readonly waiting = new Map<
    number,
    { bytes: Buffer; encoding: string | undefined; precision: Precision; done: (parsed: ParsedLines) => void }
  >()

  constructor(private readonly options: LineProtocolParserOptions) {}

  /** How many bodies the thread has parsed (for tests and metrics). */
  threadParses = 0

  /**
   * Parses `bytes` (a body as received, its `Content-Encoding` header `encoding`) with timestamps in `precision`
   * units, and calls `done` once with the batch or the refusal: at once on the event loop, or later from the thread.
   */
  parse(bytes: Buffer, encoding: string | undefined, precision: Precision, done: (parsed: ParsedLines) => void): void {
    if (bytes.length < this.options.threadMinBytes || this.failed || this.closed) {
      return done(parseHere(bytes, encoding, precision))
    }
    const worker = (this.worker ??= this.start())
    // Bodies the thread has not parsed yet (not those parsed but whose answers wait for the event loop, which is then
    // the busier side).
    if (!this.ready || this.posted - Atomics.load(this.parsed, 0) >= LineProtocolParser.maxWaiting) {
      return done(parseHere(bytes, encoding, precision))
    }
    const id = this.nextId++
    this.waiting.set(id, { bytes, encoding, precision, done })
    const request: ParseRequest = {
      id,
      bytes,
      encoding,
      precision,
      maxBytes: lineProtocolLimits.maxBytes,
      maxFieldValues: lineProtocolLimits.maxFieldValues
    }
    this.posted++
    worker.postMessage(request)
  }

  // How many bodies were sent to the thread, and how many it has parsed (counted by the thread as it answers).
  private posted = 0
  private readonly parsed = new Int32Array(new SharedArrayBuffer(4))

  /**
   * Starts the thread now (rather than with the first large body) and waits until it takes bodies: `true`, or `false`
   * when it failed to start (bodies are then parsed on the event loop).
   */
  warmUp(): Promise<boolean> {
    if (this.failed || this.closed) return Promise.resolve(false)
    if (this.ready) return Promise.resolve(true)
    const worker = (this.worker ??= this.start())
    return new Promise((resolve) => {
      const onMessage = (message: unknown) => {
        if (message !== "ready") return
        worker.off("message", onMessage)
        worker.off("exit", onExit)
        resolve(true)
      }
      const onExit = () => {
        worker.off("message", onMessage)
        resolve(false)
      }
      worker.on("message", onMessage)
      worker.once("exit", onExit)
    })
  }

  private start(): Worker {
    const workerData: ThreadData = { parsed: this.parsed }
    const worker = new Worker(threadFile, { workerData })
    // The thread never keeps the process alive on its own: bodies in flight belong to requests, which do.
    worker.unref()
    worker.on("message", (reply: ParseReply | "ready") => {
      if (reply === "ready") return void (this.ready = true)
      const waiting = this.waiting.get(reply.id)
      if (waiting === undefined) return
      this.waiting.delete(reply.id)
      this.threadParses++
      waiting.done(parsedOf(reply, waiting))
    })
    worker.on("error", (error) => this.fail(error))
    worker.on("exit", (code) => this.fail(new Error(`the line protocol thread exited with code ${code}`)))
    return worker
  }

  private fail(error: Error): void {
    if (this.closed || this.failed) return
    this.failed = true
    this.options.onThreadFailure?.(error)
    this.parseWaitingHere()
  }

  // The bodies waiting on a thread that is gone, parsed on the event loop.
  private parseWaitingHere(): void {
    const waiting = [...this.waiting.values()]
    this.waiting.clear()
    for (const { bytes, encoding, precision, done } of waiting) done(parseHere(bytes, encoding, precision))
  }

  /** Ends the thread; bodies waiting on it are parsed on the event loop, and so is every later one. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.closed = true
    this.parseWaitingHere()
    return this.worker === undefined ? Promise.resolve() : this.worker.terminate().then(() => undefined)
  }
}

/** A body parsed on the event loop: the thread's steps, in the same order. */
const parseHere = (bytes: Buffer, encoding: string | undefined, precision: Precision): ParsedLines => {
  const text = lineProtocolBodyText(bytes, encoding, lineProtocolLimits.maxBytes)
  if (typeof text !== "string") return bodyRefusal(text, lineProtocolLimits.maxBytes)
  return parseLineProtocol(text, { precision, maxFieldValues: lineProtocolLimits.maxFieldValues })
}

/** The thread's answer as the event loop's parse would have given it (an unexpected failure: parsed here again). */
const parsedOf = (
  reply: ParseReply,
  waiting: { bytes: Buffer; encoding: string | undefined; precision: Precision }
): ParsedLines => {
  if (reply.batch !== undefined) return Either.right(LineBatch.fromTransfer(reply.batch))
  if (reply.refused !== undefined) return bodyRefusal(reply.refused, lineProtocolLimits.maxBytes)
  if (reply.error !== undefined) {
    const { tag, message, path } = reply.error
    return Either.left(
      tag === "PayloadTooLarge"
        ? new PayloadTooLarge({ message })
        : new InvalidRequest(path === undefined ? { message } : { message, path })
    )
  }
  return parseHere(waiting.bytes, waiting.encoding, waiting.precision)
}
