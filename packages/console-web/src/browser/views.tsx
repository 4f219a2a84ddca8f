/**
 * What the account page's lists (dashboards and rotations, docs/api.md sections 11.1 and 15.2; alert rules and
 * receivers, section 18.5) have in common: loading the list, a row's changes, and the actions of a shared view's row
 * on the view and its share link.
 */
import { useEffect, useState } from "preact/hooks"
import { api, type ViewKind } from "./api.js"
import { ConfirmButton, ErrorText } from "./ui.js"
import { ShareLink } from "./ViewLink.js"

/**
 * An account's items (views, rules, receivers, widgets) as `load` answers them: `undefined` while the first answer is
 * awaited, then the list; `loadError` the last failure. `reload` reads them again; `deps` re-read them when they change.
 */
export const useViewList = <V,>(load: () => Promise<ReadonlyArray<V>>, deps: ReadonlyArray<unknown>) => {
  const [items, setItems] = useState<ReadonlyArray<V> | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  const reload = () =>
    load().then(
      (list) => {
        setItems(list)
        setLoadError(undefined)
      },
      (error: unknown) => setLoadError(error)
    )
  useEffect(() => void reload(), deps)
  return { items, loadError, reload }
}

/**
 * One row's changes (of a list on the account page): `act` runs a change, then `onChanged` (the list is read again);
 * its failure is kept in `error` for the row to show.
 */
export const useRowAction = (onChanged: () => void) => {
  const [error, setError] = useState<unknown>(undefined)
  const act = async (action: () => Promise<unknown>) => {
    setError(undefined)
    try {
      await action()
      onChanged()
    } catch (e) {
      setError(e)
    }
  }
  return { error, act }
}

/** The singular noun of each kind of view, as the console writes it. */
const nouns: Readonly<Record<ViewKind, string>> = { dashboards: "dashboard", rotations: "rotation" }

/**
 * One view's actions in its row: edit it (`edit`, a link and its label), open and copy its share link, give it a new
 * link (rotate, or replace an unknown one), delete it after a confirmation. A failure is shown in the row;
 * `onChanged` runs after each change (the list is read again).
 */
export const ViewActions = (props: {
  readonly kind: ViewKind
  readonly accountId: string
  readonly view: { readonly id: string; readonly name: string; readonly url: string | null }
  readonly edit: { readonly href: string; readonly label: string }
  readonly onChanged: () => void
}) => {
  const { kind, accountId, view } = props
  const { error, act } = useRowAction(props.onChanged)
  const noun = nouns[kind]
  return (
    <div class="cw-actions">
      <a class="cw-button" href={props.edit.href}>
        {props.edit.label}
      </a>
      <ShareLink url={view.url} renew={() => void act(() => api[kind].newLink(accountId, view.id))} />
      <ConfirmButton
        label="Delete"
        question={`Delete the ${noun} ${view.name}?`}
        confirmLabel={`Delete ${noun}`}
        danger
        action={() => void act(() => api[kind].remove(accountId, view.id))}
      />
      <ErrorText error={error} />
    </div>
  )
}
