// Opens agora's GraphiQL in headless Chromium with every network but the loopback interface cut
// off, and uses it as a newcomer would: the editor appears with the commented Authorization
// example, the schema loads into the documentation explorer, a query runs, a user signs up, the
// token goes in the Headers tab, a mutation runs as that user, and a subscription over graphql-ws
// receives an event. It fails on any request to another origin, any script error and any
// Content-Security-Policy violation.
//
//   node check.mjs http://127.0.0.1:PORT/     (run.sh starts a server and runs this)
//
// CHROMIUM names the browser (default: chromium on PATH).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium } from 'playwright-core';

const base = new URL(process.argv[2] ?? '');
const timeout = 15_000;
const problems = [];
const step = (msg) => console.log(`graphiql-check: ${msg}`);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || onPath('chromium'),
  // No name resolves and every connection that is not to the loopback interface goes to a proxy
  // that does not exist: the page gets no network beyond the server.
  args: [`--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE ${base.hostname}`, '--proxy-server=http://127.0.0.1:9'],
});
try {
  await check(await browser.newPage());
} catch (err) {
  problems.push(err.stack || String(err));
} finally {
  await browser.close();
}
if (problems.length) {
  console.error(`graphiql-check: FAILED\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
step('passed');

async function check(page) {
  page.setDefaultTimeout(timeout);
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== base.origin && u.protocol !== 'data:') problems.push(`request to another origin: ${r.url()}`);
  });
  page.on('pageerror', (err) => problems.push(`script error: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  const frames = []; // what the page sent over WebSockets
  page.on('websocket', (ws) => {
    const u = new URL(ws.url());
    if (u.host !== base.host) problems.push(`WebSocket to another host: ${ws.url()}`);
    ws.on('framesent', (f) => frames.push(String(f.payload)));
  });

  await page.goto(base.href);
  await page.waitForSelector('.graphiql-query-editor .CodeMirror');
  step('the editor is shown');

  const editor = (sel) => ({
    get: () => page.$eval(sel, (e) => e.CodeMirror.getValue()),
    set: (v) => page.$eval(sel, (e, v) => e.CodeMirror.setValue(v), v),
  });
  const query = editor('.graphiql-query-editor .CodeMirror');
  const headers = editor('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror');
  const result = editor('.graphiql-response .CodeMirror');

  const shown = await headers.get();
  if (!/"\/\/Authorization": "Bearer <token>"/.test(shown)) throw new Error(`the Headers tab does not show the commented Authorization example:\n${shown}`);
  step('the Headers tab shows the commented Authorization example');

  await page.click('button[aria-label="Show Documentation Explorer"]');
  await page.waitForSelector('.graphiql-doc-explorer :text("Query")');
  step('the documentation explorer shows the schema');

  // execute sets the query editor to doc, a named operation, and runs it. GraphiQL learns the
  // operations of the editor a moment after a change (and names the tab after them): the button is
  // pressed only once the tab has the new name, so that GraphiQL knows, say, a subscription as one.
  const execute = async (doc) => {
    const name = /^(query|mutation|subscription) (\w+)/.exec(doc)?.[2];
    if (!name) throw new Error(`the check's operations must be named: ${doc}`);
    await query.set(doc);
    await waitFor(() => page.textContent('.graphiql-tab-active .graphiql-tab-button'), (t) => t?.trim() === name, `the tab to be named ${name}`);
    await page.click('.graphiql-execute-button');
  };
  // run runs doc and returns the result once it contains want.
  const run = async (doc, want) => {
    await result.set('');
    await execute(doc);
    return waitFor(result.get, (v) => v.includes(want), `the result of ${doc} to contain ${want}`);
  };
  await run('query Count { posts(first: 1) { totalCount } }', '"totalCount"');
  step('a query ran');

  const suffix = Date.now().toString(36);
  const alice = JSON.parse(await run(`mutation SignUp { signUp(name: "giql-a-${suffix}", password: "correct horse") { token user { id } } }`, '"token"')).data.signUp;
  await headers.set(JSON.stringify({ Authorization: `Bearer ${alice.token}` }, null, 2));
  await run('query Viewer { viewer { name } }', `"giql-a-${suffix}"`);
  step('signed up, and the Authorization header in the Headers tab signs the requests');

  // Bob signs up outside the browser; alice follows him in GraphiQL and subscribes to her feed.
  const bob = (await gql(`mutation { signUp(name: "giql-b-${suffix}", password: "correct horse") { token user { id } } }`)).signUp;
  await run(`mutation Follow { follow(userId: "${bob.user.id}") { viewerFollows } }`, '"viewerFollows": true');
  await result.set('');
  await execute('subscription Feed { feed { title author { name } } }');
  await waitFor(async () => frames.find((f) => f.includes('"subscribe"')), Boolean, 'the subscription to be sent');
  const init = frames.find((f) => f.includes('"connection_init"')) ?? '';
  if (!init.includes(`Bearer ${alice.token}`)) throw new Error(`connection_init did not carry the Authorization header: ${init}`);
  const title = `Hello from GraphiQL ${suffix}`;
  await gql(`mutation { createPost(input: {title: "${title}", groups: ["golang"]}) { id } }`, bob.token);
  await waitFor(result.get, (v) => v.includes(title), `the subscription's result to show "${title}"`);
  step('a subscription over graphql-ws received a new post');
}

// onPath returns the path of the program name on PATH, or name when there is none.
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {}
  }
  return name;
}

// gql sends one GraphQL request from this process (not the browser) and returns its data.
async function gql(q, token) {
  const res = await fetch(new URL('query', base), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token && { Authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ query: q }),
  });
  const body = await res.json();
  if (!res.ok || body.errors) throw new Error(`${q}: ${res.status} ${JSON.stringify(body)}`);
  return body.data;
}

// waitFor polls get until ok accepts its value, and returns the value.
async function waitFor(get, ok, what) {
  const end = Date.now() + timeout;
  let v;
  while (Date.now() < end) {
    v = await get();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}; last value: ${String(v).slice(0, 500)}`);
}
