import { AlertRuleNotFound, ReceiverNotFound } from "@dashstream/core"
import { describe, expect, it } from "vitest"
import { errorBodyText, replyOf } from "../src/HttpErrors.js"

/** The alert errors' answers (docs/api.md section 18): 404 with their own codes and messages. */
describe("alert error answers", () => {
  it("an unknown rule is 404 rule_not_found", () => {
    const reply = replyOf(new AlertRuleNotFound({ message: "no alert rule with that id in this account" }))
    expect(reply?.status).toBe(404)
    expect(JSON.parse(errorBodyText(reply!))).toEqual({
      error: { code: "rule_not_found", message: "no alert rule with that id in this account" }
    })
  })

  it("an unknown receiver is 404 receiver_not_found", () => {
    const reply = replyOf(new ReceiverNotFound({ message: "no receiver with that id in this account" }))
    expect(reply?.status).toBe(404)
    expect(reply?.code).toBe("receiver_not_found")
  })
})
