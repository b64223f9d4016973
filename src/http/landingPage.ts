/**
 * What a browser opening the GraphQL endpoint gets in production: one short page saying where the
 * API is and how to call it — no schema, no explorer, no version, nothing loaded from elsewhere.
 */
export const LANDING_PAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function landingPage(endpoint: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphQL API</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}code{background:#f3f3f3;padding:.1em .3em;border-radius:3px}</style>
</head>
<body>
<h1>GraphQL API</h1>
<p>This is a GraphQL API. Send operations to <code>${endpoint}</code> with <code>POST</code> and
<code>Content-Type: application/json</code>, a body such as <code>{"query": "{ __typename }"}</code>,
and your bearer token in the <code>Authorization</code> header.</p>
</body>
</html>
`;
}
