import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CODE_LIMITS, type RepoInput } from '../../../application/scrapers/scraper-collections.ts';
import { ValidationError } from '../../../domain/errors.ts';
import { formText } from '../account-pages.ts';
import type { Form } from '../csrf.ts';

// The scraper pages' forms as the use cases' input. The repo forms may carry files
// (multipart/form-data, so they work without JavaScript); each file becomes one entry of the repo's
// `code` map, the same map the API takes as JSON. What a file name may be, and how much code a repo
// may hold, is the use cases' to decide (validateCodeMap, checkCodeSize): here only what the
// transport needs, text that is UTF-8, and a bound on what is held in memory.

export type PostedForm = { form: Form; files: Record<string, string>; problem?: ValidationError };

/** Registers the multipart parser for the scraper pages only (encapsulated in their plugin). */
export async function acceptFileForms(app: FastifyInstance): Promise<void> {
  await app.register(multipart, {
    limits: {
      fileSize: CODE_LIMITS.maxTotalBytes,
      files: CODE_LIMITS.maxFiles,
      fields: 20,
      fieldSize: 64 * 1024,
      parts: CODE_LIMITS.maxFiles + 20,
    },
    throwFileSizeLimit: true,
  });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The posted fields and files of a urlencoded or multipart form (files: name -> UTF-8 text). A file
 * that cannot be kept is a `problem`, raised by the caller once the form's CSRF token is verified:
 * the rest of the body is still read (and dropped), so that the token, wherever it is, is seen.
 */
export async function postedForm(request: FastifyRequest): Promise<PostedForm> {
  if (!request.isMultipart()) return { form: (request.body ?? {}) as Form, files: {} };
  const form: Form = Object.create(null) as Form;
  const files: Record<string, string> = Object.create(null) as Record<string, string>;
  let total = 0;
  let problem: ValidationError | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'field') {
      if (typeof part.value === 'string') form[part.fieldname] = part.value;
      continue;
    }
    if (problem) {
      for await (const _chunk of part.file) void _chunk;
      continue;
    }
    const bytes = await part.toBuffer();
    // A file input left empty still sends a part, without a name.
    if (part.filename === '' && bytes.length === 0) continue;
    total += bytes.length;
    if (total > CODE_LIMITS.maxTotalBytes) {
      problem = new ValidationError(`the files may be at most ${CODE_LIMITS.maxTotalBytes} bytes in all`, {
        field: 'code',
        code: 'CODE_TOO_LARGE',
      });
      continue;
    }
    try {
      files[part.filename] = UTF8.decode(bytes);
    } catch {
      problem = new ValidationError(
        `${part.filename.slice(0, 80)} is not UTF-8 text: only text files belong in a repo`,
        { field: 'code', code: 'NOT_TEXT' },
      );
    }
  }
  return { form: { ...form }, files: { ...files }, ...(problem ? { problem } : {}) };
}

/** A slug from a name when the form leaves it empty: the domain still checks what comes out. */
function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 128);
}

/** The new-repo form: an upload of files or a git URL and branch. */
export function newRepoInput({ form, files }: PostedForm): RepoInput {
  const name = formText(form, 'name', 255);
  const slug = formText(form, 'slug', 128) || slugOf(name);
  if (form.sourceType === 'git') {
    const gitBranch = formText(form, 'gitBranch', 200);
    return {
      name,
      slug,
      sourceType: 'git',
      gitUrl: formText(form, 'gitUrl', 2048),
      ...(gitBranch ? { gitBranch } : {}),
    };
  }
  if (Object.keys(files).length === 0)
    throw new ValidationError('choose the files of the scraper (at least scrapers.yml)', { field: 'code' });
  return { name, slug, sourceType: 'upload', code: files };
}

/** A file's path as typed in the editor: the domain decides what is allowed. */
export function filePath(form: Form, field = 'path'): string {
  const path = formText(form, field, CODE_LIMITS.maxFileNameLength);
  if (!path) throw new ValidationError('give the file a name', { field });
  return path;
}

/** Browsers post textarea line breaks as CRLF; the files keep the line breaks a checkout would. */
export const fileContent = (form: Form): string => (form.content ?? '').replace(/\r\n/g, '\n');

/** A checkbox: present when ticked. */
export const ticked = (form: Form, name: string): boolean => form[name] !== undefined;

/** A record id from a select ('' for none). */
export function optionalId(form: Form, name: string): number | null {
  const raw = formText(form, name, 20);
  if (raw === '') return null;
  if (!/^[1-9]\d{0,15}$/.test(raw))
    throw new ValidationError(`${name} must be chosen from the list`, { field: name });
  return Number(raw);
}

/**
 * Where an action that several pages offer (sync, delete, run) goes back to: the page it was posted
 * from when that is one of the scraper pages, else the list. Never another site.
 */
export function backTo(form: Form, home: string): string {
  const back = form.back ?? '';
  return /^\/account\/scrapers(\/(repos|scrapers|runs)\/[1-9]\d{0,15})?$/.test(back) ? back : home;
}
