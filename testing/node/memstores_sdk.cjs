// Conformance run of the official TypeScript SDK (@anthropic-ai/sdk) against teamsync serve.
// node memstores_sdk.cjs  (env: TS_SDK_DIR, BASE_URL, API_KEY); prints one JSON line on success.
'use strict';
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { createRequire } = require('node:module');

const sdkRequire = createRequire(process.env.TS_SDK_DIR + '/');
const Anthropic = sdkRequire('@anthropic-ai/sdk').default;
const version = JSON.parse(require('node:fs').readFileSync(process.env.TS_SDK_DIR + '/node_modules/@anthropic-ai/sdk/package.json', 'utf8')).version;
const sha = (t) => crypto.createHash('sha256').update(t, 'utf8').digest('hex');
const iso = (v) => assert.ok(typeof v === 'string' && !Number.isNaN(Date.parse(v)), `not RFC 3339: ${v}`);

function isMemory(m, full) {
  assert.equal(m.type, 'memory');
  assert.match(m.id, /^mem_/);
  assert.match(m.memory_store_id, /^memstore_/);
  assert.match(m.memory_version_id, /^memver_/);
  assert.match(m.content_sha256, /^[0-9a-f]{64}$/);
  assert.equal(typeof m.content_size_bytes, 'number');
  iso(m.created_at); iso(m.updated_at);
  if (full) assert.equal(typeof m.content, 'string'); else assert.equal(m.content, null);
}
function isVersion(v) {
  assert.equal(v.type, 'memory_version');
  assert.match(v.id, /^memver_/);
  assert.ok(['created', 'modified', 'deleted'].includes(v.operation));
  iso(v.created_at);
}
async function rejects(promise, cls, errorType) {
  try { await promise; } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${e && e.constructor && e.constructor.name}`);
    if (errorType) assert.equal(e.error.error.type, errorType);
    return e;
  }
  assert.fail(`expected ${cls.name}`);
}

async function main() {
  const client = new Anthropic({ baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY, maxRetries: 0 });
  const stores = client.beta.memoryStores;
  let calls = 0;
  const made = await stores.create({ name: 'Team memory', metadata: { k: 'v' } }); calls++;
  assert.equal(made.type, 'memory_store'); assert.match(made.id, /^memstore_/);
  assert.equal((await stores.retrieve(made.id)).name, 'Team memory'); calls++;
  const upd = await stores.update(made.id, { description: 'notes', metadata: { k: null, a: 'b' } }); calls++;
  assert.deepEqual(upd.metadata, { a: 'b' }); assert.equal(upd.description, 'notes');
  const other = await stores.create({ name: 'Scratch' }); calls++;
  const listed = []; for await (const s of stores.list()) listed.push(s.id); calls++;
  assert.deepEqual(new Set(listed), new Set([made.id, other.id]));

  const mems = stores.memories;
  const first = await mems.create(made.id, { path: '/notes/a.md', content: 'alpha\n' }); calls++;
  isMemory(first, false); assert.equal(first.content_sha256, sha('alpha\n'));
  const got = await mems.retrieve(first.id, { memory_store_id: made.id }); calls++;
  isMemory(got, true); assert.equal(got.content, 'alpha\n');
  await mems.create(made.id, { path: '/notes/deep/b.md', content: 'b' }); calls++;
  await mems.create(made.id, { path: '/top.md', content: 't' }); calls++;
  const pre = { type: 'content_sha256', content_sha256: first.content_sha256 };
  const changed = await mems.update(first.id, { memory_store_id: made.id, content: 'beta\n', precondition: pre }); calls++;
  isMemory(changed, false); assert.equal(changed.content_sha256, sha('beta\n'));
  await rejects(mems.update(first.id, { memory_store_id: made.id, content: 'lost', precondition: pre }),
    Anthropic.ConflictError, 'memory_precondition_failed_error'); calls++;
  const moved = await mems.update(first.id, { memory_store_id: made.id, path: '/notes/c.md' }); calls++;
  assert.equal(moved.id, first.id); assert.equal(moved.path, '/notes/c.md');
  await rejects(mems.update(first.id, { memory_store_id: made.id, path: '/top.md' }),
    Anthropic.ConflictError, 'memory_path_conflict_error'); calls++;
  // a path overlapping another memory's (a file where a folder is needed, or the reverse)
  const under = await rejects(mems.create(made.id, { path: '/top.md/inner.md', content: 'x' }),
    Anthropic.ConflictError, 'memory_path_conflict_error'); calls++;
  assert.equal(under.error.error.conflicting_path, '/top.md');
  const over = await rejects(mems.update(first.id, { memory_store_id: made.id, path: '/notes/deep' }),
    Anthropic.ConflictError, 'memory_path_conflict_error'); calls++;
  assert.equal(over.error.error.conflicting_path, '/notes/deep/b.md');

  const top = []; for await (const i of mems.list(made.id, { depth: 1 })) top.push([i.type, i.path]); calls++;
  assert.deepEqual(top, [['memory_prefix', '/notes/'], ['memory', '/top.md']]);
  for (let n = 0; n < 23; n++) { await mems.create(made.id, { path: `/bulk/${String(n).padStart(2, '0')}.md`, content: `n${n}` }); calls++; }
  const page = await mems.list(made.id, { path_prefix: '/bulk/', limit: 5 }); calls++;
  assert.equal(page.data.length, 5); assert.ok(page.next_page && page.hasNextPage());
  const all = []; for await (const m of mems.list(made.id, { path_prefix: '/bulk/', limit: 5 })) { isMemory(m, false); all.push(m.path); } calls++;
  assert.equal(all.length, 23); assert.equal(all[22], '/bulk/22.md');
  const fulls = await mems.list(made.id, { path_prefix: '/bulk/', view: 'full', limit: 100 }); calls++;
  assert.equal(fulls.data.length, 20); fulls.data.forEach((m) => isMemory(m, true));

  await rejects(mems.delete(first.id, { memory_store_id: made.id, expected_content_sha256: sha('nope') }),
    Anthropic.ConflictError); calls++;
  const del = await mems.delete(first.id, { memory_store_id: made.id, expected_content_sha256: sha('beta\n') }); calls++;
  assert.deepEqual(del, { type: 'memory_deleted', id: first.id });
  await rejects(mems.retrieve(first.id, { memory_store_id: made.id }), Anthropic.NotFoundError, 'not_found_error'); calls++;

  const vers = stores.memoryVersions;
  const lineage = []; for await (const v of vers.list(made.id, { memory_id: first.id })) { isVersion(v); lineage.push(v); } calls++;
  assert.deepEqual(lineage.map((v) => v.operation), ['deleted', 'modified', 'modified', 'created']);
  assert.equal(lineage[0].created_by.type, 'api_actor');
  const created = await vers.retrieve(lineage[3].id, { memory_store_id: made.id }); calls++;
  assert.equal(created.content, 'alpha\n');
  const red = await vers.redact(created.id, { memory_store_id: made.id }); calls++;
  isVersion(red); assert.ok(red.redacted_at); assert.equal(red.content, null); assert.equal(red.path, null);
  assert.equal((await vers.retrieve(created.id, { memory_store_id: made.id })).content_sha256, null); calls++;

  const arch = await stores.archive(other.id); calls++;
  assert.ok(arch.archived_at);
  await rejects(mems.create(other.id, { path: '/x.md', content: 'x' }), Anthropic.BadRequestError, 'invalid_request_error'); calls++;
  assert.deepEqual(await stores.delete(other.id), { type: 'memory_store_deleted', id: other.id }); calls++;
  await rejects(stores.retrieve(other.id), Anthropic.NotFoundError); calls++;
  const bad = new Anthropic({ baseURL: process.env.BASE_URL, apiKey: 'tsm_000000000000_' + 'x'.repeat(43), maxRetries: 0 });
  await rejects(bad.beta.memoryStores.list(), Anthropic.AuthenticationError, 'authentication_error'); calls++;
  console.log(JSON.stringify({ ok: true, sdk: version, calls }));
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
