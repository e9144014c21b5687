-- 0003: a workspace's head generation (sqlite 0013), and the notifications
-- that tell every process sharing the store what another one changed
-- (docs/decisions/023): on forkspace_heads, "ID GEN" when a workspace's
-- head generation moves and "ID -1" when it is deleted; on forkspace_audit,
-- the sequence number of each new audit entry (the change feed). A
-- notification is sent when its transaction commits, never before.
ALTER TABLE workspaces ADD COLUMN head_gen BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION forkspace_notify_head() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('forkspace_heads', OLD.id || ' -1');
        RETURN OLD;
    END IF;
    IF NEW.head_gen <> OLD.head_gen THEN
        PERFORM pg_notify('forkspace_heads', NEW.id || ' ' || NEW.head_gen);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER workspaces_notify_head AFTER UPDATE OF head_gen OR DELETE ON workspaces
    FOR EACH ROW EXECUTE FUNCTION forkspace_notify_head();

CREATE FUNCTION forkspace_notify_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('forkspace_audit', NEW.seq::text);
    RETURN NEW;
END $$;
CREATE TRIGGER audit_log_notify AFTER INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION forkspace_notify_audit();
