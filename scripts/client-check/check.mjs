// Checks agora with the GraphQL clients apps use, Apollo Client and urql, each with its
// persisted-queries link, against the GraphQL endpoint given as the first argument or in
// AGORA_URL:
//
//   - signs up, creates a post with 30 comments;
//   - pages the post's comments forwards (first, after) and backwards (last, before) with each
//     client — Apollo Client through its relayStylePagination cache policy and fetchMore, urql
//     page by page — and checks the items, their order and every page's pageInfo;
//   - runs a new query through each client's persisted-queries link twice: the first time the
//     link sends the hash alone, the server answers PERSISTED_QUERY_NOT_FOUND and the link sends
//     the document with it; the second time the server answers the hash alone.
//
// It prints what it checked and exits non-zero on the first failure.
//
//   node check.mjs http://127.0.0.1:8080/query
import { createHash, randomBytes } from 'node:crypto';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { relayStylePagination } from '@apollo/client/utilities';
import { Client, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';

const url = process.argv[2] || process.env.AGORA_URL;
if (!url) {
  console.error('usage: node check.mjs <url of the GraphQL endpoint>');
  process.exit(2);
}

const COMMENTS = 30;
const PAGE = 7; // not a divisor of COMMENTS, so that the last page is short

function sha256(text) {
  return createHash('sha256').update(text).digest('hex');
}

// check prints what was checked, or throws with detail when it does not hold.
function check(ok, what, detail = '') {
  if (!ok) throw new Error(`FAIL ${what}${detail ? `: ${detail}` : ''}`);
  console.log(`ok   ${what}`);
}

function same(got, want) {
  return got.length === want.length && got.every((v, i) => v === want[i]);
}

// recordingFetch is fetch that notes every request it sends: how, whether it carried the
// document and the persisted-query hash, and the response's error codes.
function recordingFetch(log) {
  return async (input, init = {}) => {
    const target = new URL(typeof input === 'string' ? input : input.url);
    const method = (init.method || 'GET').toUpperCase();
    let sent = {};
    if (method === 'GET') {
      for (const k of ['query', 'extensions']) {
        if (target.searchParams.has(k)) sent[k] = k === 'query' ? target.searchParams.get(k) : JSON.parse(target.searchParams.get(k));
      }
    } else if (typeof init.body === 'string') {
      sent = JSON.parse(init.body);
    }
    const res = await fetch(input, init);
    let codes = [];
    try {
      const body = await res.clone().json();
      codes = (body.errors || []).map((e) => e.extensions && e.extensions.code);
    } catch {
      // not JSON: the client reports it
    }
    log.push({ method, document: typeof sent.query === 'string', hash: sent.extensions?.persistedQuery?.sha256Hash, codes });
    return res;
  };
}

// gqlFetch runs a document without a client, for the set-up.
async function gqlFetch(query, variables, token) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const body = await res.json();
  if (body.errors) throw new Error(`${query.slice(0, 40)}…: ${JSON.stringify(body.errors)}`);
  return body.data;
}

const COMMENT_PAGE = gql`
  query CommentPage($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    post(id: $id) {
      id
      comments(first: $first, after: $after, last: $last, before: $before) {
        totalCount
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        edges { cursor node { id body } }
      }
    }
  }
`;

// checkPage checks one page of comments against the whole list: its items are want[from:to],
// and its pageInfo says what precedes and follows them.
function checkPage(who, what, conn, want, from, to) {
  const ids = conn.edges.map((e) => e.node.id);
  check(same(ids, want.slice(from, to)), `${who}: ${what}: items ${from}..${to - 1}`, ids.join(' '));
  const pi = conn.pageInfo;
  check(pi.hasPreviousPage === from > 0 && pi.hasNextPage === to < want.length,
    `${who}: ${what}: hasPreviousPage ${pi.hasPreviousPage}, hasNextPage ${pi.hasNextPage}`);
  check(pi.startCursor === conn.edges[0].cursor && pi.endCursor === conn.edges[conn.edges.length - 1].cursor,
    `${who}: ${what}: startCursor and endCursor are the edges' cursors`);
  check(conn.totalCount === want.length, `${who}: ${what}: totalCount ${conn.totalCount}`);
}

// A new client of each kind, recording its requests in log.
function apolloClient(log, token, withPagination) {
  const http = new HttpLink({ uri: url, fetch: recordingFetch(log), headers: token ? { authorization: `Bearer ${token}` } : {} });
  const typePolicies = withPagination ? { Post: { fields: { comments: relayStylePagination(['sort']) } } } : {};
  return new ApolloClient({
    link: ApolloLink.from([new PersistedQueryLink({ sha256 }), http]),
    cache: new InMemoryCache({ typePolicies }),
  });
}

function urqlClient(log) {
  return new Client({
    url,
    fetch: recordingFetch(log),
    requestPolicy: 'network-only',
    exchanges: [persistedExchange({ generateHash: async (query) => sha256(query) }), fetchExchange],
  });
}

async function urqlQuery(client, doc, variables) {
  const r = await client.query(doc, variables).toPromise();
  if (r.error) throw new Error(`urql: ${r.error.message}`);
  return r.data;
}

// watch starts an Apollo watchQuery and returns, once it has a complete result: that result, and
// until(pred), which waits (up to 5 s) for a result the cache sends that satisfies pred, and
// stop. A watched query receives the cache's updates, fetchMore's merges among them, after the
// fetchMore that made them has resolved.
function watch(client, variables) {
  const query = client.watchQuery({ query: COMMENT_PAGE, variables });
  let latest = null;
  const waiting = new Set();
  return new Promise((resolve, reject) => {
    const sub = query.subscribe({
      next: (r) => {
        if (!r.data || r.loading) return;
        latest = r.data;
        for (const w of waiting) w(latest);
        resolve({ data: r.data, query, until, stop: () => sub.unsubscribe() });
      },
      error: reject,
    });
    function until(pred, what) {
      return new Promise((ok, fail) => {
        if (latest && pred(latest)) return ok(latest);
        const timer = setTimeout(() => {
          waiting.delete(w);
          fail(new Error(`FAIL the watched query never showed ${what}`));
        }, 5000);
        const w = (d) => {
          if (!pred(d)) return;
          clearTimeout(timer);
          waiting.delete(w);
          ok(d);
        };
        waiting.add(w);
      });
    }
  });
}

// Apollo Client: forwards with fetchMore and the relayStylePagination policy, which appends
// each page; then, on a fresh cache, backwards from the end, which prepends each page.
async function apolloPaging(postID, want) {
  const who = 'Apollo Client';
  const forward = await watch(apolloClient([], '', true), { id: postID, first: PAGE });
  try {
    let page = forward.data.post.comments;
    checkPage(who, `first: ${PAGE}`, page, want, 0, PAGE);
    for (let from = PAGE; page.pageInfo.hasNextPage; from += PAGE) {
      const r = await forward.query.fetchMore({ variables: { first: PAGE, after: page.pageInfo.endCursor } });
      page = r.data.post.comments;
      checkPage(who, `first: ${PAGE}, after`, page, want, from, Math.min(from + PAGE, want.length));
    }
    const all = await forward.until((d) => d.post.comments.edges.length === want.length, 'every page merged');
    const merged = all.post.comments.edges.map((e) => e.node.id);
    check(same(merged, want), `${who}: the pages merged forwards are the whole list, in order`);
  } finally {
    forward.stop();
  }

  const backward = await watch(apolloClient([], '', true), { id: postID, last: PAGE });
  try {
    let page = backward.data.post.comments;
    let to = want.length;
    checkPage(who, `last: ${PAGE}`, page, want, to - PAGE, to);
    for (to -= PAGE; page.pageInfo.hasPreviousPage; to -= PAGE) {
      const r = await backward.query.fetchMore({ variables: { last: PAGE, before: page.pageInfo.startCursor } });
      page = r.data.post.comments;
      checkPage(who, `last: ${PAGE}, before`, page, want, Math.max(to - PAGE, 0), to);
    }
    const all = await backward.until((d) => d.post.comments.edges.length === want.length, 'every page merged');
    const merged = all.post.comments.edges.map((e) => e.node.id);
    check(same(merged, want), `${who}: the pages merged backwards are the whole list, in order`);
  } finally {
    backward.stop();
  }
}

// urql: forwards to the end, then backwards from the end cursor; the union is the list.
async function urqlPaging(postID, want) {
  const who = 'urql';
  const client = urqlClient([]);
  const seen = [];
  let page;
  for (let from = 0, after = null; ; from += PAGE) {
    page = (await urqlQuery(client, COMMENT_PAGE, { id: postID, first: PAGE, after })).post.comments;
    checkPage(who, `first: ${PAGE}${after ? ', after' : ''}`, page, want, from, Math.min(from + PAGE, want.length));
    seen.push(...page.edges.map((e) => e.node.id));
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  check(same(seen, want), `${who}: forwards: the whole list, in order`);
  const back = [want[want.length - 1]];
  for (let to = want.length - 1, before = page.pageInfo.endCursor; ; to -= PAGE) {
    page = (await urqlQuery(client, COMMENT_PAGE, { id: postID, last: PAGE, before })).post.comments;
    checkPage(who, `last: ${PAGE}, before`, page, want, Math.max(to - PAGE, 0), to);
    back.unshift(...page.edges.map((e) => e.node.id));
    if (!page.pageInfo.hasPreviousPage) break;
    before = page.pageInfo.startCursor;
  }
  check(same(back, want), `${who}: backwards from the end cursor: the whole list, in order`);
  const both = await urqlQuery(client, COMMENT_PAGE, { id: postID, first: 2, last: 2 }).catch((e) => e);
  check(both instanceof Error && /first and last/.test(both.message), `${who}: first and last together are refused`);
}

// persisted runs a query the server has never seen twice through a client, and checks the
// automatic persisted queries exchange: hash alone, PERSISTED_QUERY_NOT_FOUND, hash with the
// document; then the hash alone, answered.
async function persisted(who, log, run) {
  const nonce = randomBytes(6).toString('hex');
  const doc = gql`query PersistedCheck { posts(sort: NEW, first: 1) { totalCount } n${nonce}: leaderboard(last: 1) { totalCount } }`;
  log.length = 0;
  const first = await run(doc);
  check(first.posts.totalCount >= 1, `${who}: persisted query: answered`);
  const [miss, full] = log;
  const requests = JSON.stringify(log);
  check(log.length === 2 && !miss.document && miss.hash && miss.codes.includes('PERSISTED_QUERY_NOT_FOUND'),
    `${who}: persisted query, first run: the hash alone (${miss?.method}) is answered PERSISTED_QUERY_NOT_FOUND`, requests);
  check(full.document && full.hash === miss.hash && full.codes.length === 0,
    `${who}: persisted query, first run: the link sends the document with its hash, and it is answered`, requests);
  log.length = 0;
  const second = await run(doc);
  check(second.posts.totalCount === first.posts.totalCount, `${who}: persisted query, second run: answered`);
  check(log.length === 1 && !log[0].document && log[0].hash === miss.hash && log[0].codes.length === 0,
    `${who}: persisted query, second run: one request, the hash alone, answered`, JSON.stringify(log));
}

async function main() {
  const name = `client${randomBytes(4).toString('hex')}`;
  const { signUp } = await gqlFetch(`mutation($n: String!) { signUp(name: $n, password: "client-check-1") { token } }`, { n: name });
  const token = signUp.token;
  const { createPost } = await gqlFetch(`mutation { createPost(input: { title: "A thread to page" }) { id } }`, {}, token);
  const postID = createPost.id;
  for (let i = 0; i < COMMENTS; i++) {
    await gqlFetch(`mutation($p: ID!, $b: String!) { createComment(postId: $p, body: $b) { id } }`, { p: postID, b: `comment ${i}` }, token);
  }
  const all = await gqlFetch(`query($id: ID!) { post(id: $id) { comments(first: 100) { edges { node { id } } } } }`, { id: postID });
  const want = all.post.comments.edges.map((e) => e.node.id);
  check(want.length === COMMENTS, `set-up: ${COMMENTS} comments on ${postID}`);

  await apolloPaging(postID, want);
  await urqlPaging(postID, want);

  const apolloLog = [];
  const apollo = apolloClient(apolloLog, '', false);
  await persisted('Apollo Client', apolloLog, async (doc) => (await apollo.query({ query: doc, fetchPolicy: 'network-only' })).data);
  const urqlLog = [];
  const urql = urqlClient(urqlLog);
  await persisted('urql', urqlLog, (doc) => urqlQuery(urql, doc, {}));
}

main().then(
  () => console.log('\nall client checks passed'),
  (err) => {
    console.error(`\n${err.stack || err}`);
    process.exit(1);
  },
);
