// The Accept header: does the client ask for remove.bg's JSON result (`{"data":{"result_b64":…}}`)? Pure.

export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept
    .toLowerCase()
    .split(',')
    .some((range) => {
      const [type, ...params] = range.split(';').map((s) => s.trim());
      if (type !== 'application/json') return false;
      const q = params.find((p) => p.startsWith('q='));
      return q === undefined || Number(q.slice(2)) > 0;
    });
}
