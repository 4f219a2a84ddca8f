/** A shared view's link as the console shows it (docs/api.md section 11): open it, copy it, or say why it cannot. */
import { useState } from "preact/hooks"
import { ConfirmButton } from "./ui.js"

/** What the console says of a view made before view links were kept (its answer has `url: null`). */
export const unknownLinkText = "This link can't be shown again; replace it to get a new one."

/**
 * The actions of a view's share link: "Open view page" and "Copy link" when the server shows the link (`url`, a path
 * under the server's base path, made absolute against this page), else {@link unknownLinkText} ({@link ShareLink} puts
 * the button that replaces it beside it). `copy: false` leaves the copy button out (the layout editor's toolbar: it
 * opens the page).
 */
export const ViewLink = (props: { readonly url: string | null; readonly copy?: boolean }) => {
  const [copied, setCopied] = useState(false)
  if (props.url === null)
    return (
      <span class="cw-hint cw-link-unknown" role="note">
        {unknownLinkText}
      </span>
    )
  const href = new URL(props.url, location.href).href
  const copy = () =>
    void navigator.clipboard?.writeText(href).then(
      () => setCopied(true),
      () => setCopied(false)
    )
  return (
    <>
      <a class="cw-button" href={href} target="_blank" rel="noreferrer noopener">
        Open view page
      </a>
      {props.copy === false ? null : (
        <button type="button" class="cw-copy-link" data-link={href} onClick={copy}>
          {copied ? "Copied" : "Copy link"}
        </button>
      )}
    </>
  )
}

/**
 * A view's share link ({@link ViewLink}) and the button that gives it a new view token (docs/api.md section 11.4):
 * "Rotate view link", asking first since the current link stops working; for a view whose link is not kept
 * (`url: null`), "Replace link" beside {@link unknownLinkText}. `renew` makes the new token.
 */
export const ShareLink = (props: { readonly url: string | null; readonly renew: () => void }) => (
  <>
    <ViewLink url={props.url} />
    {props.url === null ? (
      <ConfirmButton
        label="Replace link"
        question="The old link stops working. Make a new one?"
        confirmLabel="Replace"
        action={props.renew}
      />
    ) : (
      <ConfirmButton
        label="Rotate view link"
        question="The current view link stops working. Make a new one?"
        confirmLabel="Rotate"
        action={props.renew}
      />
    )}
  </>
)
