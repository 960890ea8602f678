// Starts GraphiQL on agora's page (httpapi/graphiql/index.html), with the React and GraphiQL
// globals that the page's other scripts define.
//
// Queries and mutations go to /query beside the page over HTTP, subscriptions to the same URL over
// a WebSocket (graphql-transport-ws, the graphql-ws client bundled in GraphiQL), whose
// connection_init payload carries the headers of the Headers tab, as agora expects.
//
// The Headers tab must hold JSON, which has no comments: a header whose name starts with // is a
// comment, shown but never sent. The default headers use that to show where the token goes.
(() => {
  'use strict';

  const defaultHeaders = `{
  "//": "headers whose name starts with // are not sent: sign in, paste your token below and drop the //",
  "//Authorization": "Bearer <token>"
}`;

  const defaultQuery = `# Welcome to agora. Ctrl-Enter (or the ▶ button) runs the operation under the cursor.
#
# To act as a user, run SignUp (or LogIn when the name is taken), copy the token from the
# result and put it in the Headers tab below: {"Authorization": "Bearer <token>"}.
# A subscription stays open and shows each event as it arrives; run another operation to end it.

mutation SignUp { signUp(name: "alice", password: "correct horse") { token user { id name } } }
mutation LogIn { logIn(name: "alice", password: "correct horse") { token user { id name } } }

mutation CreatePost { createPost(input: {title: "Hello agora", body: "First post", groups: ["golang"]}) { id title score } }

query FrontPage {
  posts(sort: HOT, first: 10) {
    totalCount
    edges { node { id title score upvotes author { name } groups { name } } }
  }
}

subscription Published { postPublished { id title author { name } } }
`;

  // The page's own location, so that the IDE also works behind a proxy that adds a path prefix.
  const http = new URL('query', window.location.href);
  const ws = new URL(http);
  ws.protocol = http.protocol === 'https:' ? 'wss:' : 'ws:';

  const fetcher = GraphiQL.createFetcher({ url: http.href, subscriptionUrl: ws.href });

  // sent drops the commented-out headers (names starting with //).
  const sent = (headers) => Object.fromEntries(Object.entries(headers || {}).filter(([name]) => !name.startsWith('//')));

  const root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(
    React.createElement(GraphiQL, {
      fetcher: (params, opts) => fetcher(params, { ...opts, headers: sent(opts && opts.headers) }),
      defaultQuery,
      defaultHeaders,
      defaultEditorToolsVisibility: 'headers',
    }),
  );
})();
