import { widgetTypes } from "@dashstream/dashboard-web/browser"
import { useEffect, useState } from "preact/hooks"
import { api, type Widget } from "./api.js"
import { exampleText, formatAge, summarize } from "./examples.js"
import { ConfirmButton, describeError, ErrorText, ListTable, Section, useNow } from "./ui.js"

/** How often the widgets list re-reads latest values (milliseconds). */
const refreshMs = 3000

/**
 * The widgets of an account (docs/api.md section 14): type, latest value and its age (counting up, re-read every few
 * seconds); create; delete after a confirmation; push a test point from an editable example for the widget's type.
 */
export const WidgetsPanel = (props: { readonly accountId: string }) => {
  const [widgets, setWidgets] = useState<ReadonlyArray<Widget> | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  const [streamName, setStreamName] = useState("")
  const [type, setType] = useState<string>("number")
  const [createError, setCreateError] = useState<unknown>(undefined)
  const [testing, setTesting] = useState<string | undefined>(undefined)
  const [rowError, setRowError] = useState<{ stream: string; error: unknown } | undefined>(undefined)
  const now = useNow(1000)

  const load = () =>
    api.listWidgets(props.accountId).then(
      (list) => {
        setWidgets(list)
        setLoadError(undefined)
      },
      (error: unknown) => setLoadError(error)
    )
  useEffect(() => {
    void load()
    const timer = setInterval(() => void load(), refreshMs)
    return () => clearInterval(timer)
  }, [props.accountId])

  const create = async (event: Event) => {
    event.preventDefault()
    setCreateError(undefined)
    try {
      await api.createWidget(props.accountId, streamName, type)
      setStreamName("")
      await load()
    } catch (error) {
      setCreateError(error)
    }
  }

  const remove = async (stream: string) => {
    setRowError(undefined)
    try {
      await api.deleteWidget(props.accountId, stream)
      if (testing === stream) setTesting(undefined)
      await load()
    } catch (error) {
      setRowError({ stream, error })
    }
  }

  return (
    <Section title="Widgets">
      <ListTable
        items={widgets}
        loadError={loadError}
        empty="No widgets yet: create one below."
        class="cw-widgets"
        headers={["Stream", "Type", "Latest value", "Age", ""]}
        row={(w) => [
          <tr key={w.streamName} data-stream={w.streamName}>
            <td class="cw-stream">{w.streamName}</td>
            <td>{w.type}</td>
            <td class="cw-latest">
              {w.latest === undefined ? (
                ""
              ) : w.latest === null ? (
                <span class="cw-muted">empty</span>
              ) : (
                summarize(w.type, w.latest.point)
              )}
            </td>
            <td class="cw-age">{w.latest === undefined || w.latest === null ? "" : formatAge(w.latest.ts, now)}</td>
            <td>
              <div class="cw-actions">
                <button
                  type="button"
                  aria-expanded={testing === w.streamName}
                  onClick={() => setTesting(testing === w.streamName ? undefined : w.streamName)}
                >
                  Test point
                </button>
                <ConfirmButton
                  label="Delete"
                  question={`Delete ${w.streamName} and all its data?`}
                  confirmLabel="Delete widget"
                  danger
                  action={() => void remove(w.streamName)}
                />
                {rowError?.stream === w.streamName ? <ErrorText error={rowError.error} /> : null}
              </div>
            </td>
          </tr>,
          testing === w.streamName ? (
            <tr key={`${w.streamName} test`} class="cw-test-row">
              <td colSpan={5}>
                <TestPoint accountId={props.accountId} widget={w} onStored={() => void load()} />
              </td>
            </tr>
          ) : null
        ]}
      />
      <h3>Create a widget</h3>
      <form class="cw-inline-form" onSubmit={(e) => void create(e)}>
        <label>
          Stream name
          <input name="streamName" required value={streamName} onInput={(e) => setStreamName(e.currentTarget.value)} />
        </label>
        <label>
          Type
          <select name="type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            {widgetTypes.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="cw-primary">
          Create widget
        </button>
      </form>
      <ErrorText error={createError} />
    </Section>
  )
}

/**
 * Pushes a test point to a widget (`POST /admin/accounts/<id>/widgets/<stream>/points`, stored exactly as a push
 * with the account's key would be), starting from an example for the widget's type. The point's errors come back
 * as a push's would, with their `path`.
 */
const TestPoint = (props: { readonly accountId: string; readonly widget: Widget; readonly onStored: () => void }) => {
  const [text, setText] = useState(() => exampleText(props.widget.type))
  const [result, setResult] = useState<{ ok: boolean; message: string } | undefined>(undefined)
  const send = async (event: Event) => {
    event.preventDefault()
    let point: unknown
    try {
      point = JSON.parse(text)
    } catch (error) {
      return setResult({ ok: false, message: `This is not JSON: ${describeError(error)}` })
    }
    try {
      await api.pushPoint(props.accountId, props.widget.streamName, point)
      setResult({ ok: true, message: "Stored." })
      props.onStored()
    } catch (error) {
      setResult({ ok: false, message: describeError(error) })
    }
  }
  return (
    <form class="cw-test-point" onSubmit={(e) => void send(e)}>
      <label>
        Point for {props.widget.streamName} ({props.widget.type}), as a push's <code>point</code>
        <textarea
          name="point"
          rows={Math.min(12, text.split("\n").length + 1)}
          spellcheck={false}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
      <div class="cw-row">
        <button type="submit" class="cw-primary">
          Push test point
        </button>
        <button type="button" onClick={() => setText(exampleText(props.widget.type))}>
          Reset example
        </button>
        {result === undefined ? null : (
          <span class={result.ok ? "cw-ok" : "cw-error"} role={result.ok ? "status" : "alert"}>
            {result.message}
          </span>
        )}
      </div>
    </form>
  )
}
