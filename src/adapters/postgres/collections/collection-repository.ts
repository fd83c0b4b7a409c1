import { Type } from 'typebox';
import type { FragmentSqlToken } from 'slonik';
import type {
  CollectionRepository,
  Doc,
  DocValues,
} from '../../../ports/collections/collection-repository.ts';
import { COLLECTION_TABLES, type CollectionTable, type WritableColumn } from './collection-tables.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { orderSql, whereSql } from '../where-sql.ts';
import { mapConstraintErrors } from '../constraint-errors.ts';

const DocRow = Type.Object({ doc: Type.Record(Type.String(), Type.Unknown()) });
const CountRow = Type.Object({ total: Type.Number() });
const IdRow = Type.Object({ id: Type.Number() });
const FactsRow = Type.Object({
  catalog_id: Type.Number(),
  catalog_public: Type.Boolean(),
  catalog_owner: Type.Union([Type.Number(), Type.Null()]),
  dataset_id: Type.Union([Type.Number(), Type.Null()]),
  dataset_public: Type.Union([Type.Boolean(), Type.Null()]),
  dataset_owner: Type.Union([Type.Number(), Type.Null()]),
});

function valueSql(spec: WritableColumn, value: unknown): FragmentSqlToken {
  if (spec.kind === 'setting')
    return sql.fragment`jsonb_build_object(${spec.key}::text, ${sql.jsonb(value as never)})`;
  if (value === null || value === undefined) return sql.fragment`null`;
  switch (spec.kind) {
    case 'text':
      return sql.fragment`${String(value)}::text`;
    case 'int':
      return sql.fragment`${Number(value)}::bigint`;
    case 'bool':
      return sql.fragment`${Boolean(value)}::boolean`;
    case 'timestamptz':
      return sql.fragment`${String(value)}::timestamptz`;
    case 'jsonb':
      return sql.fragment`${sql.jsonb(value as never)}`;
    case 'point': {
      const point = value as { longitude: number; latitude: number };
      return sql.fragment`st_setsrid(st_makepoint(${point.longitude}, ${point.latitude}), 4326)`;
    }
  }
}

function columnsOf(table: CollectionTable, values: DocValues): [string, FragmentSqlToken, WritableColumn][] {
  return Object.entries(values).map(([field, value]) => {
    const spec = table.writable[field];
    if (!spec) throw new Error(`${table.table}: field ${field} is not writable`);
    return [spec.column, valueSql(spec, value), spec];
  });
}

/** `column = value`; a settings key is merged into the column's other keys. */
function assignment([column, value, spec]: [string, FragmentSqlToken, WritableColumn]): FragmentSqlToken {
  const target = sql.identifier([column]);
  return spec.kind === 'setting'
    ? sql.fragment`${target} = coalesce(${target}, '{}'::jsonb) || ${value}`
    : sql.fragment`${target} = ${value}`;
}

export function postgresCollectionRepository(pool: DatabasePool): CollectionRepository {
  return {
    async find(collection, viewer, query) {
      const table = COLLECTION_TABLES[collection];
      const where = sql.fragment`${table.readable(viewer)} and ${whereSql(query.where, table.columns)}`;
      const { total } = await pool.one(sql.type(row(CountRow))`
        select count(*)::int as total from ${table.from} where ${where}`);
      const rows = await pool.any(sql.type(row(DocRow))`
        select ${table.listDoc ?? table.doc} as doc from ${table.from} where ${where}
        order by ${orderSql(query.sort, table.columns, table.id)}
        limit ${query.limit} offset ${(query.page - 1) * query.limit}`);
      return { docs: rows.map((r) => r.doc as Doc), totalDocs: total };
    },
    async findById(collection, viewer, id) {
      const table = COLLECTION_TABLES[collection];
      const found = await pool.maybeOne(sql.type(row(DocRow))`
        select ${table.doc} as doc from ${table.from} where ${table.id} = ${id} and ${table.readable(viewer)}`);
      return (found?.doc as Doc | undefined) ?? null;
    },
    async hierarchy(collection, id) {
      const query =
        collection === 'catalogs'
          ? sql.fragment`select c.id as catalog_id, c.is_public as catalog_public, c.created_by as catalog_owner,
              null::bigint as dataset_id, null::boolean as dataset_public, null::bigint as dataset_owner
              from catalogs c where c.id = ${id}`
          : collection === 'datasets'
            ? sql.fragment`select c.id as catalog_id, c.is_public as catalog_public, c.created_by as catalog_owner,
                d.id as dataset_id, d.is_public as dataset_public, d.created_by as dataset_owner
                from datasets d join catalogs c on c.id = d.catalog_id where d.id = ${id}`
            : sql.fragment`select c.id as catalog_id, c.is_public as catalog_public, c.created_by as catalog_owner,
                d.id as dataset_id, d.is_public as dataset_public, d.created_by as dataset_owner
                from events e join datasets d on d.id = e.dataset_id join catalogs c on c.id = d.catalog_id
                where e.id = ${id}`;
      const facts = await pool.maybeOne(sql.type(row(FactsRow))`${query}`);
      if (!facts) return null;
      return {
        catalogId: facts.catalog_id,
        catalog: { id: facts.catalog_id, isPublic: facts.catalog_public, createdBy: facts.catalog_owner },
        datasetId: facts.dataset_id,
        dataset:
          facts.dataset_id === null
            ? null
            : { isPublic: facts.dataset_public ?? false, createdBy: facts.dataset_owner },
      };
    },
    async insert(collection, values) {
      const table = COLLECTION_TABLES[collection];
      const columns = columnsOf(table, values);
      return mapConstraintErrors(async () => {
        const inserted = await pool.one(sql.type(row(IdRow))`
          insert into ${sql.identifier([table.table])}
            (${sql.join(
              columns.map(([column]) => sql.identifier([column])),
              sql.fragment`, `,
            )})
          values (${sql.join(
            columns.map(([, value]) => value),
            sql.fragment`, `,
          )})
          returning id`);
        return inserted.id;
      });
    },
    async update(collection, id, values) {
      const table = COLLECTION_TABLES[collection];
      const columns = columnsOf(table, values);
      if (columns.length === 0) return;
      await mapConstraintErrors(() =>
        pool.query(sql.unsafe`
          update ${sql.identifier([table.table])}
          set ${sql.join([...columns.map(assignment), sql.fragment`updated_at = now()`], sql.fragment`, `)}
          where id = ${id}`),
      );
    },
    async remove(collection, id) {
      const table = COLLECTION_TABLES[collection];
      await pool.query(sql.unsafe`delete from ${sql.identifier([table.table])} where id = ${id}`);
    },
  };
}
