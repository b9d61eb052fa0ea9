/**
 * A bound on a wait that must not hold up what comes after it (a leader giving up its lease, a
 * health check): the value, or undefined when `p` rejects or has not settled after `ms`.
 */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([p.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
