/** The file src/browser/generated/api.ts for `document` (an OpenAPI 3.1 document as a plain object). */
export declare const apiTypes: (document: object) => Promise<string>
