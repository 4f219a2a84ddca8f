import { useEffect, useMemo, useState } from "preact/hooks"
import { ReceiverForm, RuleForm } from "./AlertForms.js"
import { conditionText, localTimeToIso, ruleDraftOf, silencePresets, silenceUntil } from "./alertForm.js"
import { type AlertRule, api, ApiError, type Receiver } from "./api.js"
import { intervalText } from "./rotationForm.js"
import { ConfirmButton, ErrorText, ListTable, Section } from "./ui.js"
import { useRowAction, useViewList } from "./views.js"

/** How often the rules are read again, in milliseconds: their state changes as points arrive. */
const refreshMs = 5000

/** Which form is open: a new or an existing rule or receiver, or none. */
type Editing =
  | { readonly what: "rule"; readonly rule: AlertRule | undefined }
  | { readonly what: "receiver"; readonly receiver: Receiver | undefined }
  | undefined

/**
 * The alerts of an account (docs/api.md section 18), beside its dashboards and rotations: its rules with their state
 * (`ok`, `pending`, `firing` in the alert colour, since when) and silence, and its receivers (the URL shown, whether
 * it has a secret, never the secret). Rules and receivers are created, edited and deleted (after a confirmation)
 * here; a rule is silenced for a preset or until a time, or its silence lifted; a receiver is sent a test
 * notification. The rules are read again every {@link refreshMs} ms.
 */
export const AlertsPanel = (props: { readonly accountId: string }) => {
  const { accountId } = props
  const rules = useViewList(() => api.alertRules.list(accountId), [accountId])
  const receivers = useViewList(() => api.receivers.list(accountId), [accountId])
  const widgets = useViewList(() => api.listWidgets(accountId), [accountId])
  const [editing, setEditing] = useState<Editing>(undefined)
  useEffect(() => {
    const timer = setInterval(() => void rules.reload(), refreshMs)
    return () => clearInterval(timer)
  }, [accountId])
  const receiverNames = useMemo(() => new Map((receivers.items ?? []).map((r) => [r.id, r.name])), [receivers.items])
  const streams = useMemo(() => (widgets.items ?? []).map((w) => w.streamName), [widgets.items])
  const done = () => {
    setEditing(undefined)
    void rules.reload()
    void receivers.reload()
  }

  return (
    <Section title="Alerts">
      <p class="cw-hint">
        A rule watches one stream and notifies its receivers when its condition starts and stops holding.
      </p>
      <h3>Rules</h3>
      <ListTable
        items={rules.items}
        loadError={rules.loadError}
        empty="No rules yet."
        class="cw-alert-rules"
        headers={["Name", "Stream", "Condition", "For", "State", "Receivers", ""]}
        row={(rule) => (
          <tr key={rule.id} data-rule={rule.id}>
            <td class="cw-wrap">{rule.name}</td>
            <td class="cw-wrap">{rule.streamName}</td>
            <td class="cw-nowrap">{conditionText(rule.condition)}</td>
            <td class="cw-nowrap">{intervalText(rule.for)}</td>
            <td>
              <RuleState rule={rule} />
            </td>
            <td class="cw-wrap">
              {rule.receiverIds.length === 0 ? (
                <span class="cw-muted">none</span>
              ) : (
                rule.receiverIds.map((id) => receiverNames.get(id) ?? "…").join(", ")
              )}
            </td>
            <td>
              <RuleActions
                accountId={accountId}
                rule={rule}
                onEdit={() => setEditing({ what: "rule", rule })}
                onChanged={() => void rules.reload()}
              />
            </td>
          </tr>
        )}
      />
      {editing?.what === "rule" ? (
        <RuleForm
          key={editing.rule?.id ?? "new"}
          rule={editing.rule}
          initial={
            editing.rule === undefined
              ? { name: "", streamName: streams[0] ?? "", kind: "above", value: "", for: "0", receiverIds: [] }
              : ruleDraftOf(editing.rule)
          }
          streams={streams}
          receivers={receivers.items ?? []}
          save={(body) =>
            editing.rule === undefined
              ? api.alertRules.create(accountId, body)
              : api.alertRules.save(accountId, editing.rule.id, body)
          }
          onDone={done}
        />
      ) : (
        <p>
          <button type="button" class="cw-primary" onClick={() => setEditing({ what: "rule", rule: undefined })}>
            New rule
          </button>
        </p>
      )}

      <h3>Receivers</h3>
      <ListTable
        items={receivers.items}
        loadError={receivers.loadError}
        empty="No receivers yet."
        class="cw-receivers"
        headers={["Name", "Kind", "URL", "Secret", ""]}
        row={(receiver) => (
          <tr key={receiver.id} data-receiver={receiver.id}>
            <td class="cw-wrap">{receiver.name}</td>
            <td>{receiver.kind}</td>
            <td class="cw-wrap">
              <code>{receiver.url}</code>
            </td>
            <td class="cw-nowrap">{receiver.hasSecret ? "has secret" : <span class="cw-muted">none</span>}</td>
            <td>
              <ReceiverActions
                accountId={accountId}
                receiver={receiver}
                onEdit={() => setEditing({ what: "receiver", receiver })}
                onChanged={done}
              />
            </td>
          </tr>
        )}
      />
      {editing?.what === "receiver" ? (
        <ReceiverForm
          key={editing.receiver?.id ?? "new"}
          receiver={editing.receiver}
          save={(body) =>
            editing.receiver === undefined
              ? api.receivers.create(accountId, body)
              : api.receivers.save(accountId, editing.receiver.id, body)
          }
          onDone={done}
        />
      ) : (
        <p>
          <button
            type="button"
            class="cw-primary"
            onClick={() => setEditing({ what: "receiver", receiver: undefined })}
          >
            New receiver
          </button>
        </p>
      )}
    </Section>
  )
}

/** A rule's state (`firing` in the alert colour), since when, and until when it is silenced. */
const RuleState = ({ rule }: { readonly rule: AlertRule }) => {
  const silenced = rule.silencedUntil !== null && Date.parse(rule.silencedUntil) > Date.now()
  return (
    <div class="cw-alert-state">
      <span class={`cw-state cw-state-${rule.state}`} data-state={rule.state}>
        {rule.state}
      </span>{" "}
      <span class="cw-muted cw-nowrap">since {new Date(rule.stateSince).toLocaleString()}</span>
      {silenced ? (
        <div class="cw-silenced" data-silenced-until={rule.silencedUntil}>
          silenced until {new Date(rule.silencedUntil!).toLocaleString()}
        </div>
      ) : null}
    </div>
  )
}

/** A rule's actions: edit, silence (1 h, 1 day, until a time) or lift its silence, delete after a confirmation. */
const RuleActions = (props: {
  readonly accountId: string
  readonly rule: AlertRule
  readonly onEdit: () => void
  readonly onChanged: () => void
}) => {
  const { accountId, rule } = props
  const { error, act } = useRowAction(props.onChanged)
  const [silencing, setSilencing] = useState(false)
  const [until, setUntil] = useState("")
  const silence = (iso: string | null) =>
    void act(async () => {
      await api.alertRules.silence(accountId, rule.id, iso)
      setSilencing(false)
    })
  const silenced = rule.silencedUntil !== null && Date.parse(rule.silencedUntil) > Date.now()
  return (
    <div class="cw-actions">
      <button type="button" onClick={props.onEdit}>
        Edit
      </button>
      {silenced ? (
        <button type="button" onClick={() => silence(null)}>
          Lift silence
        </button>
      ) : null}
      {silencing ? (
        <span class="cw-confirm" role="group" aria-label={`Silence ${rule.name}`}>
          {silencePresets.map((p) => (
            <button key={p.label} type="button" onClick={() => silence(silenceUntil(Date.now(), p.seconds))}>
              {p.label}
            </button>
          ))}
          <input
            type="datetime-local"
            name="silenceUntil"
            aria-label="Silence until"
            value={until}
            onInput={(e) => setUntil(e.currentTarget.value)}
          />
          <button
            type="button"
            disabled={localTimeToIso(until) === undefined}
            onClick={() => {
              const iso = localTimeToIso(until)
              if (iso !== undefined) silence(iso)
            }}
          >
            Until then
          </button>
          <button type="button" onClick={() => setSilencing(false)}>
            Cancel
          </button>
        </span>
      ) : (
        <button type="button" onClick={() => setSilencing(true)}>
          Silence…
        </button>
      )}
      <ConfirmButton
        label="Delete"
        question={`Delete the rule ${rule.name}?`}
        confirmLabel="Delete rule"
        danger
        action={() => void act(() => api.alertRules.remove(accountId, rule.id))}
      />
      <ErrorText error={error} />
    </div>
  )
}

/**
 * A receiver's actions: edit, send a test notification (its answer shown: the receiver's HTTP status, or why it could
 * not be reached), delete after a confirmation.
 */
const ReceiverActions = (props: {
  readonly accountId: string
  readonly receiver: Receiver
  readonly onEdit: () => void
  readonly onChanged: () => void
}) => {
  const { accountId, receiver } = props
  const { error, act } = useRowAction(props.onChanged)
  const [test, setTest] = useState<{ readonly ok: boolean; readonly text: string } | undefined>(undefined)
  const [testing, setTesting] = useState(false)
  const sendTest = async () => {
    setTesting(true)
    setTest(undefined)
    try {
      const status = await api.receivers.test(accountId, receiver.id)
      setTest({ ok: status >= 200 && status < 300, text: `The receiver answered ${status}.` })
    } catch (e) {
      setTest({
        ok: false,
        text:
          e instanceof ApiError && e.code === "receiver_unreachable"
            ? `Not reached: ${e.message}`
            : e instanceof Error
              ? e.message
              : String(e)
      })
    } finally {
      setTesting(false)
    }
  }
  return (
    <div class="cw-actions">
      <button type="button" onClick={props.onEdit}>
        Edit
      </button>
      <button type="button" disabled={testing} onClick={() => void sendTest()}>
        Send a test notification
      </button>
      <ConfirmButton
        label="Delete"
        question={`Delete the receiver ${receiver.name}?`}
        confirmLabel="Delete receiver"
        danger
        action={() => void act(() => api.receivers.remove(accountId, receiver.id))}
      />
      {test === undefined ? null : (
        <p class={test.ok ? "cw-ok cw-test-result" : "cw-error cw-test-result"} role="status">
          {test.text}
        </p>
      )}
      <ErrorText error={error} />
    </div>
  )
}
