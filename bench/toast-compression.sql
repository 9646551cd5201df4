-- lz4 against pglz for event data: 4,000 tool results of ~4.6 KB of
-- log text as jsonb, inserted into a table of each compression (the values are
-- rebuilt from text, so each is compressed by its table and not copied as is),
-- then sizes and a full read. In a scratch database:
--   createdb -h 127.0.0.1 -U postgres toast_bench && psql -h 127.0.0.1 -U postgres -d toast_bench -f bench/toast-compression.sql
\timing on
DROP TABLE IF EXISTS t_pglz, t_lz4, src;
CREATE TABLE t_pglz (id int, data jsonb COMPRESSION pglz);
CREATE TABLE t_lz4 (id int, data jsonb COMPRESSION lz4);
CREATE TABLE src AS
SELECT g AS id, jsonb_build_object('message', jsonb_build_object('role', 'tool', 'parts', jsonb_build_array(jsonb_build_object(
  'type', 'tool_result', 'callId', 'c' || g, 'output',
  (SELECT string_agg(format('2026-11-25T12:00:%s INFO worker[%s] processed job %s in %s ms status=ok path=/srv/app/src/module%s.ts',
     lpad((i % 60)::text, 2, '0'), i, i * 7919, i % 97, i % 13), E'\n') FROM generate_series(g, g + 40) i))))) AS data
FROM generate_series(1, 4000) g;
INSERT INTO t_pglz SELECT id, data::text::jsonb FROM src;
INSERT INTO t_lz4 SELECT id, data::text::jsonb FROM src;
SELECT pg_total_relation_size('t_pglz') AS pglz_bytes, pg_total_relation_size('t_lz4') AS lz4_bytes,
       (SELECT sum(length(data::text)) FROM src) AS json_bytes;
SELECT sum(length(data::text)) FROM t_pglz;
SELECT sum(length(data::text)) FROM t_lz4;
DROP TABLE t_pglz, t_lz4, src;
