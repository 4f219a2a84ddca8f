/**
 * The forms of an account's alert rules and receivers (docs/api.md sections 18.1, 18.2): create or edit one, a 400
 * shown beside the field its `path` names and the form kept.
 */
import { useState } from "preact/hooks"
import {
  conditionKindLabels,
  conditionKinds,
  fieldOfPath,
  receiverBody,
  type ReceiverDraft,
  receiverKinds,
  ruleBody,
  type RuleDraft
} from "./alertForm.js"
import { type AlertRule, ApiError, type Receiver } from "./api.js"
import { ErrorText, Field, FieldMessage } from "./ui.js"

/**
 * The state of a form sent to the API: `send` runs `call`; a 400 naming a field is kept as that field's message
 * (`fieldMessage(name)`), any other failure as the form's. Editing a field (`edited(name)`) clears its message.
 */
const useSend = () => {
  const [field, setField] = useState<{ readonly name: string; readonly message: string } | undefined>(undefined)
  const [formError, setFormError] = useState<unknown>(undefined)
  const [sending, setSending] = useState(false)
  const send = async (call: () => Promise<unknown>, done: () => void) => {
    if (sending) return
    setSending(true)
    setField(undefined)
    setFormError(undefined)
    try {
      await call()
      done()
    } catch (error) {
      const name = error instanceof ApiError && error.status === 400 ? fieldOfPath(error.path) : undefined
      if (name !== undefined) setField({ name, message: (error as ApiError).message })
      else setFormError(error)
    } finally {
      setSending(false)
    }
  }
  return {
    send,
    sending,
    formError,
    fieldMessage: (name: string) => (field?.name === name ? field.message : undefined),
    edited: (name: string) => setField((f) => (f?.name === name ? undefined : f))
  }
}

/** The buttons ending a form: submit (`label`) and Cancel. */
const FormButtons = (props: { readonly label: string; readonly sending: boolean; readonly onCancel: () => void }) => (
  <div class="cw-row">
    <button type="submit" class="cw-primary" disabled={props.sending}>
      {props.label}
    </button>
    <button type="button" onClick={props.onCancel}>
      Cancel
    </button>
  </div>
)

/**
 * Creates (`rule` undefined) or edits a rule: name, stream (picked from the account's widgets, `streams`), condition
 * kind and value, `for` (seconds), receivers (picked from `receivers`). `save` sends the body (`POST` or `PUT`);
 * `onDone` runs after it succeeded or on Cancel.
 */
export const RuleForm = (props: {
  readonly rule: AlertRule | undefined
  readonly initial: RuleDraft
  readonly streams: ReadonlyArray<string>
  readonly receivers: ReadonlyArray<Receiver>
  readonly save: (body: ReturnType<typeof ruleBody>) => Promise<unknown>
  readonly onDone: () => void
}) => {
  const [draft, setDraft] = useState<RuleDraft>(props.initial)
  const { send, sending, formError, fieldMessage, edited } = useSend()
  const edit = (name: string, change: Partial<RuleDraft>) => {
    setDraft((d) => ({ ...d, ...change }))
    edited(name)
  }
  const streams = props.streams.includes(draft.streamName) ? props.streams : [draft.streamName, ...props.streams]
  const picked = new Set(draft.receiverIds)
  return (
    <form
      class="cw-alert-form"
      aria-label={props.rule === undefined ? "New rule" : `Edit rule ${props.rule.name}`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        void send(() => props.save(ruleBody(draft)), props.onDone)
      }}
    >
      <Field label="Name" message={fieldMessage("name")}>
        <input name="ruleName" value={draft.name} onInput={(e) => edit("name", { name: e.currentTarget.value })} />
      </Field>
      <Field label="Stream" message={fieldMessage("streamName")}>
        <select
          name="ruleStream"
          value={draft.streamName}
          onChange={(e) => edit("streamName", { streamName: e.currentTarget.value })}
        >
          {streams.map((s) => (
            <option key={s} value={s}>
              {s === "" ? "(pick a widget)" : s}
            </option>
          ))}
        </select>
      </Field>
      <div class="cw-row">
        <Field label="Condition" message={undefined}>
          <select
            name="conditionKind"
            value={draft.kind}
            onChange={(e) => edit("condition", { kind: e.currentTarget.value as RuleDraft["kind"] })}
          >
            {conditionKinds.map((k) => (
              <option key={k} value={k}>
                {conditionKindLabels[k]}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Value" message={fieldMessage("condition")}>
          <input
            name="conditionValue"
            inputMode="decimal"
            value={draft.value}
            onInput={(e) => edit("condition", { value: e.currentTarget.value })}
          />
        </Field>
        <Field label="For (seconds)" message={fieldMessage("for")}>
          <input
            name="ruleFor"
            inputMode="numeric"
            value={draft.for}
            onInput={(e) => edit("for", { for: e.currentTarget.value })}
          />
        </Field>
      </div>
      <fieldset class="cw-alert-receivers">
        <legend>Receivers</legend>
        {props.receivers.length === 0 ? <span class="cw-muted">No receivers yet.</span> : null}
        {props.receivers.map((r) => (
          <label key={r.id} class="cw-check">
            <input
              type="checkbox"
              name="ruleReceiver"
              value={r.id}
              checked={picked.has(r.id)}
              onChange={(e) => {
                const on = e.currentTarget.checked
                edit("receiverIds", {
                  receiverIds: on ? [...draft.receiverIds, r.id] : draft.receiverIds.filter((id) => id !== r.id)
                })
              }}
            />
            <span class="cw-wrap">{r.name}</span>
          </label>
        ))}
        <FieldMessage message={fieldMessage("receiverIds")} />
      </fieldset>
      <ErrorText error={formError} />
      <FormButtons
        label={props.rule === undefined ? "Create rule" : "Save rule"}
        sending={sending}
        onCancel={props.onDone}
      />
    </form>
  )
}

/**
 * Creates (`receiver` undefined) or edits a receiver: name, kind, URL and its secret, which is write-only: a new
 * receiver gets one when it is typed; an edited one keeps its stored secret, removes it or sets a new one (docs/api.md
 * section 18.2). `save` sends the body; `onDone` runs after it succeeded or on Cancel.
 */
export const ReceiverForm = (props: {
  readonly receiver: Receiver | undefined
  readonly save: (body: ReturnType<typeof receiverBody>) => Promise<unknown>
  readonly onDone: () => void
}) => {
  const r = props.receiver
  const [draft, setDraft] = useState<Omit<ReceiverDraft, "secret">>({
    name: r?.name ?? "",
    kind: r?.kind ?? "webhook",
    url: r?.url ?? ""
  })
  const [secretAction, setSecretAction] = useState<"keep" | "remove" | "set">(r === undefined ? "set" : "keep")
  const [secret, setSecret] = useState("")
  const { send, sending, formError, fieldMessage, edited } = useSend()
  const edit = (name: string, change: Partial<ReceiverDraft>) => {
    setDraft((d) => ({ ...d, ...change }))
    edited(name)
  }
  const body = () =>
    receiverBody({
      ...draft,
      secret:
        secretAction === "set"
          ? secret === "" && r === undefined
            ? { action: "keep" }
            : { action: "set", value: secret }
          : { action: secretAction }
    })
  return (
    <form
      class="cw-alert-form"
      aria-label={r === undefined ? "New receiver" : `Edit receiver ${r.name}`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        void send(() => props.save(body()), props.onDone)
      }}
    >
      <Field label="Name" message={fieldMessage("name")}>
        <input name="receiverName" value={draft.name} onInput={(e) => edit("name", { name: e.currentTarget.value })} />
      </Field>
      <Field label="Kind" message={fieldMessage("kind")}>
        <select
          name="receiverKind"
          value={draft.kind}
          onChange={(e) => edit("kind", { kind: e.currentTarget.value as ReceiverDraft["kind"] })}
        >
          {receiverKinds.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </Field>
      <Field label="URL" message={fieldMessage("url")}>
        <input
          name="receiverUrl"
          type="url"
          value={draft.url}
          onInput={(e) => edit("url", { url: e.currentTarget.value })}
        />
      </Field>
      {r === undefined ? null : (
        <div class="cw-row" role="radiogroup" aria-label="Secret">
          {(["keep", "remove", "set"] as const).map((action) => (
            <label key={action} class="cw-check">
              <input
                type="radio"
                name="secretAction"
                value={action}
                checked={secretAction === action}
                onChange={() => {
                  setSecretAction(action)
                  edited("secret")
                }}
              />
              {action === "keep"
                ? r.hasSecret
                  ? "Keep the secret"
                  : "No secret"
                : action === "remove"
                  ? "Remove the secret"
                  : "Set a new secret"}
            </label>
          ))}
        </div>
      )}
      {secretAction === "set" ? (
        <Field
          label={r === undefined ? "Secret (optional; signs webhook bodies)" : "New secret"}
          message={fieldMessage("secret")}
        >
          <input
            name="receiverSecret"
            type="password"
            autoComplete="new-password"
            value={secret}
            onInput={(e) => {
              setSecret(e.currentTarget.value)
              edited("secret")
            }}
          />
        </Field>
      ) : (
        <FieldMessage message={fieldMessage("secret")} />
      )}
      <ErrorText error={formError} />
      <FormButtons
        label={r === undefined ? "Create receiver" : "Save receiver"}
        sending={sending}
        onCancel={props.onDone}
      />
    </form>
  )
}
