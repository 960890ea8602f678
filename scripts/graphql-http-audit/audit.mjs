// Runs graphql-http's server audits (the GraphQL-over-HTTP spec's MUSTs, SHOULDs and MAYs)
// against the GraphQL endpoint given as the first argument or in AUDIT_URL, prints every result
// and exits non-zero when any audit does not pass: an error (a MUST), a warning (a SHOULD) or a
// notice (a MAY agora has chosen to do, such as 400 for invalid parameters).
//
//   node audit.mjs http://127.0.0.1:8080/query
import { serverAudits } from 'graphql-http';

if (typeof fetch !== 'function') {
  console.error(`the audits need a global fetch: Node 18 or later (this is ${process.version})`);
  process.exit(2);
}

const url = process.argv[2] || process.env.AUDIT_URL;
if (!url) {
  console.error('usage: node audit.mjs <url of the GraphQL endpoint>');
  process.exit(2);
}

// The body of a failed audit's response, if the audit has not read it already.
async function bodyOf(response) {
  try {
    return (await response.text()).slice(0, 300);
  } catch {
    return '(body already read)';
  }
}

const counts = { ok: 0, notice: 0, warn: 0, error: 0 };
for (const audit of serverAudits({ url })) {
  let result;
  try {
    result = await audit.fn();
  } catch (err) {
    result = { status: 'error', reason: `the audit threw: ${err}` };
  }
  counts[result.status]++;
  console.log(`${result.status.toUpperCase().padEnd(6)} ${audit.id} ${audit.name}`);
  if (result.status === 'ok') continue;
  console.log(`       ${result.reason}`);
  if (result.response) {
    const { status, headers } = result.response;
    console.log(`       got ${status} ${headers.get('content-type') ?? ''}: ${await bodyOf(result.response)}`);
  }
}
console.log(`\n${counts.ok} ok, ${counts.notice} notices, ${counts.warn} warnings, ${counts.error} errors`);
process.exit(counts.notice + counts.warn + counts.error > 0 ? 1 : 0);
