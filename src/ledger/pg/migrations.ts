// The PostgreSQL ledger's schema, as numbered migrations. Never edit one that has shipped: add the next.
// migrate.ts applies the missing ones in order, in one transaction, under an advisory lock.
//
// Money moves inside the database: each function below is one statement's worth of locking (the
// account row, FOR NO KEY UPDATE) around its check and its write, so two nodes can never both spend the
// last credit or take the last slot. Slots and holds are leases: `owner` is the node, `expires_at`
// is renewed by the owner while its request runs (pg-leases.ts); once it passes, any node may give
// them back (`cutout.reap`), and the DELETE … RETURNING there makes that happen exactly once.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const V1_TABLES = `
CREATE TABLE cutout.accounts (
  id text PRIMARY KEY,
  label text NOT NULL,
  subscription bigint NOT NULL CHECK (subscription >= 0),
  payg bigint NOT NULL CHECK (payg >= 0),
  enterprise bigint NOT NULL CHECK (enterprise >= 0),
  free_calls_per_month bigint NOT NULL CHECK (free_calls_per_month >= 0),
  -- free calls used (held or settled) in free_month; another month means none used yet
  free_calls_used bigint NOT NULL DEFAULT 0,
  free_month text NOT NULL,
  concurrency bigint NOT NULL CHECK (concurrency >= 1),
  rate_per_minute bigint NOT NULL CHECK (rate_per_minute >= 1),
  created_at bigint NOT NULL,
  -- Number.MAX_SAFE_INTEGER: past it a JS number no longer counts single credits
  CHECK (subscription + payg + enterprise <= 9007199254740991)
);

-- Only sha256(key) is stored.
CREATE TABLE cutout.keys (
  hash text PRIMARY KEY,
  account_id text NOT NULL REFERENCES cutout.accounts (id),
  created_at bigint NOT NULL,
  revoked_at bigint
);
CREATE INDEX keys_account ON cutout.keys (account_id);

CREATE TABLE cutout.holds (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES cutout.accounts (id),
  size text NOT NULL,
  credits bigint NOT NULL,
  -- what each balance paid, so a refund puts every credit back where it came from
  draw_subscription bigint NOT NULL,
  draw_payg bigint NOT NULL,
  draw_enterprise bigint NOT NULL,
  -- the month whose free-call counter this hold took one from; null when credits paid
  free_month text,
  owner text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX holds_account ON cutout.holds (account_id);
CREATE INDEX holds_expires ON cutout.holds (expires_at);

CREATE TABLE cutout.slots (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES cutout.accounts (id),
  owner text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX slots_account ON cutout.slots (account_id, expires_at);
CREATE INDEX slots_expires ON cutout.slots (expires_at);

-- fixed 60 s windows aligned to the minute; window_start in unix seconds
CREATE TABLE cutout.rate (
  account_id text PRIMARY KEY REFERENCES cutout.accounts (id),
  window_start bigint NOT NULL,
  used bigint NOT NULL
);

-- one row per settled request
CREATE TABLE cutout.usage (
  reservation_id text PRIMARY KEY,
  t bigint NOT NULL,
  account_id text NOT NULL,
  size text NOT NULL,
  credits bigint NOT NULL,
  free_call boolean NOT NULL,
  output_pixels bigint NOT NULL,
  status integer NOT NULL
);
CREATE INDEX usage_t ON cutout.usage (t);

CREATE TABLE cutout.storage (
  account_id text PRIMARY KEY REFERENCES cutout.accounts (id),
  bytes bigint NOT NULL,
  files bigint NOT NULL
);
`;

const V1_FUNCTIONS = `
-- Hold credits or a free call. The offers (quote.ts offersFor) come as arrays; the first the account
-- can take wins (quote.ts pickOffer). No row back: the account cannot pay.
CREATE FUNCTION cutout.reserve(p_account text, p_hold text, p_owner text, p_lease_ms bigint, p_now bigint, p_month text,
                               p_sizes text[], p_credits bigint[], p_free_ok boolean[], p_only_if_payable boolean[])
RETURNS TABLE (o_size text, o_credits bigint, o_free_call boolean)
LANGUAGE plpgsql AS $$
DECLARE
  a cutout.accounts%ROWTYPE;
  total bigint;
  free_left bigint;
  q_size text;
  q_credits bigint;
  q_free boolean;
  d_sub bigint;
  d_payg bigint;
BEGIN
  SELECT * INTO a FROM cutout.accounts WHERE id = p_account FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'Unknown account %', p_account USING ERRCODE = 'no_data_found';
  END IF;
  total := a.subscription + a.payg + a.enterprise;
  free_left := greatest(0, a.free_calls_per_month - CASE WHEN a.free_month = p_month THEN a.free_calls_used ELSE 0 END);
  FOR i IN 1 .. coalesce(array_length(p_sizes, 1), 0) LOOP
    CONTINUE WHEN p_only_if_payable[i] AND total < p_credits[i];
    IF p_free_ok[i] AND free_left > 0 THEN
      q_size := p_sizes[i]; q_credits := 0; q_free := true;
      EXIT;
    END IF;
    IF total >= p_credits[i] THEN
      q_size := p_sizes[i]; q_credits := p_credits[i]; q_free := false;
      EXIT;
    END IF;
  END LOOP;
  IF q_size IS NULL THEN
    RETURN;
  END IF;
  -- spend order (prices.ts SPEND_ORDER): subscription, then payg, then enterprise
  d_sub := least(q_credits, a.subscription);
  d_payg := least(q_credits - d_sub, a.payg);
  UPDATE cutout.accounts SET
    subscription = a.subscription - d_sub,
    payg = a.payg - d_payg,
    enterprise = a.enterprise - (q_credits - d_sub - d_payg),
    free_calls_used = CASE WHEN q_free THEN (CASE WHEN a.free_month = p_month THEN a.free_calls_used ELSE 0 END) + 1 ELSE a.free_calls_used END,
    free_month = CASE WHEN q_free THEN p_month ELSE a.free_month END
  WHERE id = p_account;
  INSERT INTO cutout.holds (id, account_id, size, credits, draw_subscription, draw_payg, draw_enterprise, free_month, owner, expires_at, created_at)
  VALUES (p_hold, p_account, q_size, q_credits, d_sub, d_payg, q_credits - d_sub - d_payg,
          CASE WHEN q_free THEN p_month END, p_owner, clock_timestamp() + p_lease_ms * interval '1 millisecond', p_now);
  o_size := q_size; o_credits := q_credits; o_free_call := q_free;
  RETURN NEXT;
END $$;

-- Put one deleted hold's credits and free call back on its account.
CREATE FUNCTION cutout.give_back(h cutout.holds) RETURNS void
LANGUAGE sql AS $$
  UPDATE cutout.accounts a SET
    subscription = a.subscription + h.draw_subscription,
    payg = a.payg + h.draw_payg,
    enterprise = a.enterprise + h.draw_enterprise,
    -- after a month rollover the old month's counter is gone: the new month owes nothing back
    free_calls_used = CASE WHEN h.free_month IS NOT NULL AND h.free_month = a.free_month
                           THEN greatest(0, a.free_calls_used - 1) ELSE a.free_calls_used END
  WHERE a.id = h.account_id
$$;

-- Refund one hold; false when it was already settled, refunded or reaped.
CREATE FUNCTION cutout.refund(p_hold text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  h cutout.holds%ROWTYPE;
BEGIN
  DELETE FROM cutout.holds WHERE id = p_hold RETURNING * INTO h;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM cutout.give_back(h);
  RETURN true;
END $$;

-- Take a concurrency slot unless the account has p_cap live ones. The account row lock serialises
-- every taker of this account's slots, on every node; lapsed leases no longer count.
CREATE FUNCTION cutout.acquire_slot(p_account text, p_slot text, p_owner text, p_cap bigint, p_lease_ms bigint, p_now bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM cutout.accounts WHERE id = p_account FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF (SELECT count(*) FROM cutout.slots WHERE account_id = p_account AND expires_at >= clock_timestamp()) >= p_cap THEN
    RETURN false;
  END IF;
  INSERT INTO cutout.slots (id, account_id, owner, expires_at, created_at)
  VALUES (p_slot, p_account, p_owner, clock_timestamp() + p_lease_ms * interval '1 millisecond', p_now);
  RETURN true;
END $$;

-- Charge p_cost units in window p_window unless that passes p_limit (a refusal charges nothing).
CREATE FUNCTION cutout.take_rate(p_account text, p_window bigint, p_cost bigint, p_limit bigint)
RETURNS TABLE (o_ok boolean, o_used bigint)
LANGUAGE plpgsql AS $$
DECLARE
  used_now bigint;
BEGIN
  INSERT INTO cutout.rate (account_id, window_start, used) VALUES (p_account, p_window, 0) ON CONFLICT (account_id) DO NOTHING;
  SELECT CASE WHEN r.window_start = p_window THEN r.used ELSE 0 END INTO used_now
    FROM cutout.rate r WHERE r.account_id = p_account FOR NO KEY UPDATE;
  IF used_now + p_cost > p_limit THEN
    o_ok := false; o_used := used_now;
  ELSE
    UPDATE cutout.rate SET window_start = p_window, used = used_now + p_cost WHERE account_id = p_account;
    o_ok := true; o_used := used_now + p_cost;
  END IF;
  RETURN NEXT;
END $$;

-- Count one improve upload against the quota, or refuse (nothing written) with what is used.
CREATE FUNCTION cutout.take_storage(p_account text, p_bytes bigint, p_quota bigint)
RETURNS TABLE (o_ok boolean, o_used bigint)
LANGUAGE plpgsql AS $$
DECLARE
  used_now bigint;
BEGIN
  INSERT INTO cutout.storage (account_id, bytes, files) VALUES (p_account, 0, 0) ON CONFLICT (account_id) DO NOTHING;
  SELECT s.bytes INTO used_now FROM cutout.storage s WHERE s.account_id = p_account FOR NO KEY UPDATE;
  IF used_now + p_bytes > p_quota THEN
    o_ok := false; o_used := used_now;
  ELSE
    UPDATE cutout.storage SET bytes = bytes + p_bytes, files = files + 1 WHERE account_id = p_account;
    o_ok := true; o_used := used_now + p_bytes;
  END IF;
  RETURN NEXT;
END $$;

-- Keep a live request's leases: only those not yet lapsed (a lapsed slot may already be counted free).
CREATE FUNCTION cutout.renew(p_holds text[], p_slots text[], p_lease_ms bigint) RETURNS void
LANGUAGE sql AS $$
  UPDATE cutout.holds SET expires_at = clock_timestamp() + p_lease_ms * interval '1 millisecond'
    WHERE id = ANY (p_holds) AND expires_at >= clock_timestamp();
  UPDATE cutout.slots SET expires_at = clock_timestamp() + p_lease_ms * interval '1 millisecond'
    WHERE id = ANY (p_slots) AND expires_at >= clock_timestamp();
$$;

-- Give back what lapsed leases hold. Any node may run it at any time: the DELETE … RETURNING takes
-- each row once, so concurrent reapers refund every hold exactly once between them.
CREATE FUNCTION cutout.reap()
RETURNS TABLE (o_holds bigint, o_credits bigint, o_free_calls bigint, o_slots bigint)
LANGUAGE plpgsql AS $$
DECLARE
  h cutout.holds%ROWTYPE;
BEGIN
  o_holds := 0; o_credits := 0; o_free_calls := 0;
  FOR h IN DELETE FROM cutout.holds WHERE expires_at < clock_timestamp() RETURNING * LOOP
    PERFORM cutout.give_back(h);
    o_holds := o_holds + 1;
    o_credits := o_credits + h.credits;
    IF h.free_month IS NOT NULL THEN
      o_free_calls := o_free_calls + 1;
    END IF;
  END LOOP;
  WITH gone AS (DELETE FROM cutout.slots WHERE expires_at < clock_timestamp() RETURNING 1)
  SELECT count(*) INTO o_slots FROM gone;
  RETURN NEXT;
END $$;
`;

// A settle whose answer was lost (the database stalled, or the connection broke, after the statement was
// sent) may still commit once the database goes on; its request was answered 503 without its result, so
// the charge is voided: a usage row keeps what its hold drew, to give it back.
const V2_VOID = `
ALTER TABLE cutout.usage
  ADD COLUMN draw_subscription bigint NOT NULL DEFAULT 0,
  ADD COLUMN draw_payg bigint NOT NULL DEFAULT 0,
  ADD COLUMN draw_enterprise bigint NOT NULL DEFAULT 0,
  ADD COLUMN free_month text;

-- Undo a reservation whose request did not get its result: refund the hold if it is still there, else
-- give back what a late settle charged and drop its usage row. 'refunded', 'voided' or 'none'; a second
-- call finds nothing. Waits on a settle in progress (the hold's row lock), then sees its usage row.
CREATE FUNCTION cutout.void_reservation(p_id text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  u cutout.usage%ROWTYPE;
BEGIN
  IF cutout.refund(p_id) THEN
    RETURN 'refunded';
  END IF;
  DELETE FROM cutout.usage WHERE reservation_id = p_id RETURNING * INTO u;
  IF NOT FOUND THEN
    RETURN 'none';
  END IF;
  UPDATE cutout.accounts a SET
    subscription = a.subscription + u.draw_subscription,
    payg = a.payg + u.draw_payg,
    enterprise = a.enterprise + u.draw_enterprise,
    free_calls_used = CASE WHEN u.free_month IS NOT NULL AND u.free_month = a.free_month
                           THEN greatest(0, a.free_calls_used - 1) ELSE a.free_calls_used END
  WHERE a.id = u.account_id;
  RETURN 'voided';
END $$;
`;

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: 'accounts, keys, holds, slot leases, rate windows, usage, storage', sql: V1_TABLES + V1_FUNCTIONS },
  { version: 2, name: 'usage rows keep their draws; void_reservation for settles whose answer was lost', sql: V2_VOID },
]);
