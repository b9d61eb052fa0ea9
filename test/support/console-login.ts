/**
 * Signs in with a console login link the way a browser does: GET the link (a confirm page that
 * uses nothing up), then POST its form. Returns the POST's answer (303 with the cookie when the
 * link was good); the GET must show the form, or the helper throws.
 */
export async function signIn(
  link: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const confirm = await fetch(link, { redirect: 'manual', headers });
  if (confirm.status === 303) return confirm; // this browser had a session already
  const html = await confirm.text();
  const token = /name="token" value="([^"]*)"/.exec(html)?.[1];
  if (confirm.status !== 200 || token === undefined) {
    throw new Error(`no confirm page at ${link}: ${confirm.status}`);
  }
  return fetch(new URL('login', link), {
    method: 'POST',
    redirect: 'manual',
    headers,
    body: new URLSearchParams({ token }),
  });
}
