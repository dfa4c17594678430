// The inspector's calls to the server's /api/v1: JSON in and out, the admin
// token as a bearer token, the server's message as the error, and a count
// of calls in flight (the page shows it as body[data-busy], which the
// browser test waits on). Unit-tested under Node with a stand-in fetch
// (tests/ui/modules_test.mjs).

// `fetchFn` is the browser's fetch; `token()` the admin token ('' for
// none); `onUnauthorized()` runs on a 401 (the page asks for the token);
// `onBusy(n)` gets the number of calls in flight after each change.
export function createApi({ fetchFn, token, onUnauthorized, onBusy }) {
  let busy = 0;

  async function call(path, body) {
    const init = { headers: {} };
    if (token()) init.headers.Authorization = 'Bearer ' + token();
    if (body !== undefined) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetchFn(path, init);
    if (res.status === 401) {
      onUnauthorized();
      throw new Error('This server needs its admin token (--admin_token).');
    }
    const json = await res.json();
    if (!res.ok) throw new Error(json.message || res.statusText);
    return json;
  }

  // GET `path`, or POST `body` as JSON when given; resolves to the answer's
  // JSON, rejects with the server's message.
  return async function api(path, body) {
    onBusy(++busy);
    try {
      return await call(path, body);
    } finally {
      onBusy(--busy);
    }
  };
}
