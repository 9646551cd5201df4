import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `append_expect(ok, what)`: true, or an error (SQLSTATE `SSA01`) naming
 * `what`. An append in one round trip (docs/decisions.md, "An append in one
 * round trip") is one statement committed without its answer having been
 * seen; where it rests on an assumption only its own data-modifying parts can
 * check (the calls its results answer were still open), this turns a failed
 * assumption into a failed statement, so COMMIT rolls all of it back and the
 * ordinary path answers.
 */
export class AppendExpectations1766000000000 implements MigrationInterface {
  name = 'AppendExpectations1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION append_expect(ok boolean, what text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF ok IS NOT TRUE THEN
          RAISE EXCEPTION USING ERRCODE = 'SSA01', MESSAGE = 'append expectation failed: ' || what;
        END IF;
        RETURN true;
      END $$`);
    await q.query(`GRANT EXECUTE ON FUNCTION append_expect(boolean, text) TO session_store_app`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION append_expect(boolean, text)`);
  }
}
