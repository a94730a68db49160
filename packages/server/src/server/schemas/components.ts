/**
 * The shared JSON Schemas (2020-12) of the interface's resources, named by `$id`: the OpenAPI document lists them
 * under `components.schemas` and the operations refer to them (`ref('Entry')`). Field names, order and optionality
 * follow the service's resource tables; value sets (statuses, qualities, limits) come from the code's own tables, so
 * the document cannot drift from what the server writes. Response shapes are closed (`additionalProperties: false`):
 * a field the server writes and the document does not name fails the document's test. Problem documents stay open,
 * as RFC 9457 allows extension members.
 */
import {
  CURRENT_STATUS_CODES,
  DEDUPLICATION_MODES,
  LEGACY_STATUS_CODES,
  MAX_CLASSIFICATION_LENGTH,
  MAX_PATTERN_LENGTH,
  QUALITIES,
  type Classification,
} from 'mailverify/internal';
import { MAX_OVERRIDE_RULES } from '../../jobs/overrides.js';
import { MAX_COLUMN, MAX_SHEET } from '../import/settings.js';
import { JOB_STATUSES } from '../shapes.js';
import { MAX_CUSTOM_LENGTH, MAX_INPUT_LENGTH, MAX_NAME_LENGTH } from '../submission.js';

export type JsonSchema = Record<string, unknown>;

/**
 * The `$id` of a shared schema: prefixed, so that a host application's own shared schemas (a `Problem` of its own)
 * cannot clash with the server's; the document names it without the prefix.
 */
const ID_PREFIX = 'mailverify.';
const schemaId = (name: string): string => `${ID_PREFIX}${name}`;

/** The name a shared schema has in the document (`#/components/schemas/<name>`), from its `$id`. */
export const componentName = (id: string): string => (id.startsWith(ID_PREFIX) ? id.slice(ID_PREFIX.length) : id);

/** A reference to a shared schema, resolved into `#/components/schemas/<name>` in the document. */
export const ref = (name: string): JsonSchema => ({ $ref: `${schemaId(name)}#` });

const CLASSIFICATIONS: readonly Classification[] = ['Deliverable', 'Risky', 'Undeliverable', 'Unknown'];

const timestamp = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });
/** A duration as the server writes it: `hh:mm:ss`, with a `d.` prefix from 24 hours on (`30.00:00:00`). */
const duration = (description: string): JsonSchema => ({ type: 'string', pattern: '^(\\d+\\.)?\\d{2}:\\d{2}:\\d{2}$', description });
/** A duration as the server reads it: `[d.]h:m:s[.f]`, unpadded parts allowed (`0:5:0`). */
const durationInput = (description: string): JsonSchema => ({
  type: 'string',
  pattern: '^(\\d{1,7}\\.)?\\d{1,2}:\\d{1,2}:\\d{1,2}(\\.\\d{1,7})?$',
  description,
});
const index = (description: string, maximum?: number): JsonSchema => ({
  type: 'integer',
  minimum: 0,
  ...(maximum !== undefined && { maximum }),
  description,
});
const flag = (description: string): JsonSchema => ({ type: 'boolean', description });
const priority: JsonSchema = { type: 'integer', minimum: 0, maximum: 255, description: '0 (lowest) to 255 (highest); 127 is normal.' };

const Problem: JsonSchema = {
  $id: schemaId('Problem'),
  type: 'object',
  description: 'A problem document (RFC 9457), `application/problem+json`. Clients ignore members they do not know.',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', format: 'uri-reference', description: 'The kind of problem, a relative URI (`/problems/invalid-field`).' },
    title: { type: 'string', description: 'The status\'s reason phrase.' },
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status.' },
    detail: { type: 'string', description: 'What went wrong; for a field of the request, its JSON path first (`entries[3].custom: ...`).' },
    requestId: { type: 'string', description: 'The id of the request, as in its `X-Request-Id` header and the server\'s log.' },
  },
};

const Overview: JsonSchema = {
  $id: schemaId('Overview'),
  type: 'object',
  description: 'A job\'s overview. `progress` is present exactly while the job is InProgress.',
  required: ['id', 'status', 'owner', 'clientIP', 'quality', 'deduplication', 'noOfEntries', 'createdOn', 'submittedOn', 'retention'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid', description: 'The job\'s id.' },
    status: { enum: JOB_STATUSES, description: 'The job\'s state.' },
    name: { type: 'string', description: 'The name given at submission.' },
    owner: { type: 'string', description: 'The id of the user that submitted the job.' },
    clientIP: { type: 'string', description: 'The IP address the job was submitted from.' },
    quality: { type: 'string', minLength: 1, examples: [...QUALITIES], description: `The quality level the job runs at: ${QUALITIES.join(', ')}, or the id of a custom level of the server as configured.` },
    deduplication: { enum: DEDUPLICATION_MODES, description: 'How duplicates are marked.' },
    noOfEntries: { type: 'integer', minimum: 0, description: 'The number of entries of the job.' },
    createdOn: timestamp('When the job was created.'),
    submittedOn: timestamp('When the job was submitted (its creation time).'),
    completedOn: timestamp('When the job completed; absent while it runs.'),
    priority: { ...priority, description: 'The priority given at submission; absent: normal.' },
    retention: duration('How long the job is kept from its completion.'),
    progress: {
      type: 'object',
      required: ['percentage'],
      additionalProperties: false,
      properties: {
        percentage: { type: 'number', minimum: 0, maximum: 1, description: 'The share of entries done, 0 to 1.' },
        estimatedTimeRemaining: duration('The time left, once it can be estimated.'),
      },
    },
  },
  if: { properties: { status: { const: 'InProgress' } } },
  then: { required: ['progress'] },
  else: { not: { required: ['progress'] } },
};

const Entry: JsonSchema = {
  $id: schemaId('Entry'),
  type: 'object',
  description: 'The result of one entry of a job.',
  required: ['index', 'inputData', 'classification', 'status', 'completedOn'],
  additionalProperties: false,
  properties: {
    index: index('The entry\'s zero-based position in the job.'),
    inputData: { type: 'string', description: 'The input as submitted.' },
    classification: {
      type: 'string',
      minLength: 1,
      examples: CLASSIFICATIONS,
      description: `The group of the status: ${CLASSIFICATIONS.join(', ')}, or the custom name an override rule gives (status OverrideMatch).`,
    },
    status: { enum: CURRENT_STATUS_CODES, description: 'The validation status.' },
    emailAddress: { type: 'string', description: 'The recognised address, without comments or folding white space.' },
    emailAddressLocalPart: { type: 'string' },
    emailAddressDomainPart: { type: 'string' },
    asciiEmailAddressDomainPart: { type: 'string', description: 'The domain part in ASCII (IDNA).' },
    hasInternationalMailboxName: flag('The mailbox name is not ASCII.'),
    hasInternationalDomainName: flag('The domain name is not ASCII.'),
    isDisposableEmailAddress: flag('A temporary, throw-away address.'),
    isRoleAccount: flag('The local part likely stands for a group of people.'),
    isFreeEmailAddress: flag('A well-known free email provider handles the address.'),
    syntaxFailureIndex: index('Zero-based position of the first syntax error in inputData.'),
    suggestions: { type: 'array', items: { type: 'string' }, description: 'Likelier spellings of the address.' },
    custom: { type: 'string', description: 'The custom data given with the entry.' },
    duplicateOf: index('The index of the first occurrence; status Duplicate only.'),
    completedOn: timestamp('When the entry was verified.'),
    hasMixedScriptDomainName: flag(
      "mailverify's own field, not the service's: a label of the domain mixes scripts (UTS #39), as look-alikes of other domains do; present, true, only then.",
    ),
    evidence: {
      type: 'object',
      additionalProperties: false,
      description:
        "mailverify's own field, not the service's: what decided the entry, on a server started with --evidence, for entries that reached DNS or SMTP. Fields the verification did not reach are absent.",
      properties: {
        mx: { type: 'array', items: { type: 'string' }, description: "The domain's mail exchangers in preference order (none for a null MX)." },
        exchanger: { type: 'string', description: 'The exchanger asked (absent for an address literal).' },
        address: { type: 'string', description: "The exchanger's IP address connected to." },
        egress: { type: 'string', description: 'The id of the egress the connection left by.' },
        replies: {
          type: 'array',
          description: "The replies that decided: the recipient's own (or the refusal before it), then the catch-all probe's.",
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['phase', 'code', 'text'],
            properties: {
              phase: { enum: ['greeting', 'ehlo', 'mail', 'rcpt'] },
              code: { type: 'integer' },
              enhancedCode: { type: 'string' },
              text: { type: 'string', maxLength: 512 },
            },
          },
        },
        rule: { type: 'string', description: 'The classification rule that read the last reply.' },
      },
    },
  },
};

const Meta: JsonSchema = {
  $id: schemaId('Meta'),
  type: 'object',
  description: 'Paging: `cursor` is present while another page exists in either direction.',
  additionalProperties: false,
  properties: {
    isTruncated: { type: 'boolean', description: 'More items follow in the direction of travel.' },
    cursor: { type: 'string', description: 'Opaque: send it back as `cursor` (next page) or `cursor:prev` (previous page).' },
  },
};

const page = (id: string, item: string, description: string): JsonSchema => ({
  $id: schemaId(id),
  type: 'object',
  description,
  required: ['data'],
  additionalProperties: false,
  properties: { meta: ref('Meta'), data: { type: 'array', items: ref(item) } },
});

const JobSnapshot: JsonSchema = {
  $id: schemaId('JobSnapshot'),
  type: 'object',
  description: 'A job: its overview, and the first page of its entries once it is complete.',
  required: ['overview'],
  additionalProperties: false,
  properties: { overview: ref('Overview'), entries: ref('EntryPage') },
};

const AccessToken: JsonSchema = {
  $id: schemaId('AccessToken'),
  type: 'object',
  required: ['accessToken'],
  additionalProperties: false,
  properties: {
    accessToken: { type: 'string', description: 'A JWT (HS256, claims `sub` and `exp`): send it as `Authorization: Bearer <token>`.' },
  },
};

const Credentials: JsonSchema = {
  $id: schemaId('Credentials'),
  type: 'object',
  required: ['username', 'password'],
  properties: { username: { type: 'string' }, password: { type: 'string' } },
};

/** The job settings common to the JSON body and a file import's `settings` part. */
const jobSettings: Record<string, JsonSchema> = {
  quality: {
    type: 'string',
    minLength: 1,
    examples: [...QUALITIES],
    description: `${QUALITIES.join(', ')}, or the id of a custom level of the server (GET /email-validations/quality-levels); compared without case; another name is 400; default: the server's default quality.`,
  },
  priority: { ...priority, description: '0 (lowest) to 255 (highest); 127 is normal. Absent: every job runs at the same speed.' },
  deduplication: { enum: DEDUPLICATION_MODES, description: 'Compared without case; default Off.' },
  name: { type: 'string', maxLength: MAX_NAME_LENGTH },
  retention: durationInput('How long the job is kept from its completion, 0:05:00 to 30.00:00:00; default: the server\'s.'),
  callback: ref('Callback'),
  captcha: {
    type: 'object',
    description:
      'Required from a user whose `captcha.isEnabled` is true (ignored for the others): the token of a CAPTCHA the user ' +
      'solved, checked with the provider once (a token is good for one submission).',
    properties: {
      provider: { type: 'string', description: 'Turnstile, reCaptcha_v2, reCaptcha_v3 or hCaptcha (compared without case): one of the user\'s `captcha.providers`.' },
      token: { type: 'string', description: 'The token the provider\'s widget gave.' },
    },
  },
};

const SubmissionEntry: JsonSchema = {
  $id: schemaId('SubmissionEntry'),
  type: 'object',
  required: ['inputData'],
  properties: {
    inputData: { type: 'string', maxLength: MAX_INPUT_LENGTH, description: 'The address to verify.' },
    custom: { type: 'string', maxLength: MAX_CUSTOM_LENGTH, description: 'Data returned with the entry\'s result.' },
  },
};

const Submission: JsonSchema = {
  $id: schemaId('Submission'),
  type: 'object',
  description: 'A job. Unknown fields are ignored; the server\'s `maxEntriesPerJob` caps `entries`.',
  required: ['entries'],
  properties: { entries: { type: 'array', minItems: 1, items: ref('SubmissionEntry') }, ...jobSettings },
};

const Callback: JsonSchema = {
  $id: schemaId('Callback'),
  type: 'object',
  description: 'Where to POST the completion event (`email-validation.completed`).',
  required: ['url'],
  properties: {
    url: {
      type: 'string',
      format: 'uri',
      description: 'An absolute http or https URL; not a local or private address unless the server allows them.',
    },
    version: { enum: ['1.0', '1.1'], default: '1.1', description: '1.1 adds the job\'s name to the event.' },
    skipServerCertificateValidation: { type: 'boolean', default: false },
  },
};

const FileImportSettings: JsonSchema = {
  $id: schemaId('FileImportSettings'),
  type: 'object',
  description: 'The `settings` part of a file import: the job\'s settings and where the addresses are in the file.',
  properties: {
    ...jobSettings,
    startingRow: index('The first row read, zero-based; default 0.'),
    endingRow: index('The last row read, zero-based and inclusive; default: the end of the file.'),
    column: index('The column of a delimited file or a sheet, zero-based; default 0.', MAX_COLUMN),
    sheet: index('The worksheet of a workbook, zero-based; default 0.', MAX_SHEET),
    delimiter: { type: 'string', description: 'One character (`\\t` for a tab); default `,` for CSV, a tab for TSV.' },
    lineEnding: { type: 'string', description: 'CrLf (`\\r\\n`), Cr (`\\r`), Lf (`\\n`) or Auto (default).' },
  },
};

const FileImport: JsonSchema = {
  $id: schemaId('FileImport'),
  type: 'object',
  description: 'A job from a file (multipart/form-data).',
  required: ['inputFile'],
  properties: {
    inputFile: {
      type: 'string',
      contentMediaType: 'application/octet-stream',
      description:
        'The file, by its part\'s Content-Type: text/plain (one address a line), text/csv, text/tab-separated-values, ' +
        'application/vnd.ms-excel, application/vnd.openxmlformats-officedocument.spreadsheetml.sheet; `charset` for text (default UTF-8).',
    },
    settings: { type: 'string', contentMediaType: 'application/json', contentSchema: ref('FileImportSettings') },
  },
};

const LegacySubmission: JsonSchema = {
  $id: schemaId('LegacySubmission'),
  type: 'object',
  description: 'A 1.4 job. The 2.x-only fields are ignored (but `captcha`, required from a user who submits with one).',
  required: ['entries'],
  properties: {
    entries: { type: 'array', minItems: 1, items: ref('SubmissionEntry') },
    quality: jobSettings['quality'],
    priority: jobSettings['priority'],
    deduplication: { enum: ['Off', 'Safe'], description: 'Compared without case; default Off.' },
    captcha: jobSettings['captcha'],
  },
};

const LegacyEntry: JsonSchema = {
  $id: schemaId('LegacyEntry'),
  type: 'object',
  description: 'The result of one entry in the 1.4 shape, with the boolean shorthands of its status.',
  required: [
    'inputData', 'status', 'completedOn', 'syntaxFailureIndex', 'isSuccess', 'isSyntaxFailure', 'isDnsFailure',
    'isSmtpFailure', 'isMailboxFailure', 'isCatchAllFailure', 'isTimeoutFailure', 'isNetworkFailure',
  ],
  additionalProperties: false,
  properties: {
    inputData: { type: 'string' },
    status: { enum: LEGACY_STATUS_CODES, description: 'A 1.4 status: a 2.x-only status is written as its nearest 1.4 one.' },
    completedOn: timestamp('When the entry was verified.'),
    emailAddress: { type: 'string' },
    asciiEmailAddressDomainPart: { type: 'string' },
    emailAddressLocalPart: { type: 'string' },
    emailAddressDomainPart: { type: 'string' },
    hasInternationalDomainName: { type: 'boolean' },
    hasInternationalMailboxName: { type: 'boolean' },
    isDisposableEmailAddress: { type: 'boolean' },
    isFreeEmailAddress: { type: 'boolean' },
    isRoleAccount: { type: 'boolean' },
    syntaxFailureIndex: { type: ['integer', 'null'], minimum: 0, description: 'Zero-based position of the first syntax error, or null.' },
    custom: { type: 'string' },
    duplicateOf: index('The index of the first occurrence; status Duplicate only.'),
    isSuccess: { type: 'boolean' },
    isSyntaxFailure: { type: 'boolean' },
    isDnsFailure: { type: 'boolean' },
    isSmtpFailure: { type: 'boolean' },
    isMailboxFailure: { type: 'boolean' },
    isCatchAllFailure: { type: 'boolean' },
    isTimeoutFailure: { type: 'boolean' },
    isNetworkFailure: { type: 'boolean' },
  },
};

const LegacySnapshot: JsonSchema = {
  $id: schemaId('LegacySnapshot'),
  type: 'object',
  description: 'A 1.4 job: `entries` once it is complete.',
  required: ['uniqueID', 'engineVersion', 'submittedOn', 'progress'],
  additionalProperties: false,
  properties: {
    uniqueID: { type: 'string', format: 'uuid' },
    engineVersion: { type: 'string' },
    submittedOn: timestamp('When the job was submitted.'),
    completedOn: timestamp('When the job completed.'),
    priority: { ...priority, description: 'The priority given at submission; the default 127 is left out.' },
    progress: {
      type: 'object',
      required: ['noOfTotalEntries', 'noOfCompletedEntries'],
      additionalProperties: false,
      properties: {
        noOfTotalEntries: { type: 'integer', minimum: 0 },
        noOfCompletedEntries: { type: 'integer', minimum: 0 },
        estimatedRemainingTime: duration('The time left, once it can be estimated.'),
      },
    },
    entries: { type: 'array', items: ref('LegacyEntry') },
  },
};

const USER_TYPE: JsonSchema = { type: 'string', enum: ['Administrator', 'Standard', 'BrowserApp'] };

const UserOverview: JsonSchema = {
  $id: schemaId('UserOverview'),
  type: 'object',
  description: 'A user of the account, in short.',
  required: ['id', 'displayName', 'etag', 'isActive', 'type'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid' },
    displayName: { type: 'string' },
    etag: { type: 'string', description: 'Changes whenever a setting of the user changes (also the `ETag` header, quoted).' },
    isActive: { type: 'boolean' },
    isDeleted: { const: true, description: 'Present only for a deleted user (listed with `includeDeleted=true`).' },
    type: USER_TYPE,
  },
};

const UserDetail: JsonSchema = {
  $id: schemaId('UserDetail'),
  type: 'object',
  description:
    'A user\'s settings. Never a password, hash, TOTP secret or captcha secret key: `authentication.password.password` ' +
    'and the providers\' `secretKey` are write-only (given at creation or set by a PATCH).',
  required: ['type', 'displayName'],
  properties: {
    type: USER_TYPE,
    displayName: { type: 'string', minLength: 1, maxLength: 256 },
    isActive: { type: 'boolean' },
    authentication: {
      type: 'object',
      properties: {
        password: {
          type: 'object',
          properties: {
            isEnabled: { type: 'boolean' },
            isMfaRequired: { type: 'boolean', description: 'True only while a TOTP is enrolled; then HTTP Basic is refused.' },
            username: { type: 'string', description: 'For a BrowserApp, its publishable key (made by the server).' },
            password: { type: 'string', minLength: 8, maxLength: 256, writeOnly: true },
          },
        },
        certificate: { type: 'object', properties: { isEnabled: { type: 'boolean', description: 'Standard users only.' } } },
      },
    },
    authorization: {
      type: 'object',
      properties: { rules: { type: 'array', items: { type: 'string', description: '`[-]resource[:operation[:scope]]`' } } },
    },
    captcha: { type: 'object', properties: { isEnabled: { type: 'boolean' }, providers: { type: 'object' } } },
    defaults: { type: 'object', properties: { retention: durationInput('The retention of the user\'s jobs that give none.') } },
    firewall: { type: 'object', properties: { isEnabled: { type: 'boolean' }, rules: { type: 'array', items: { type: 'object' } } } },
    throttling: {
      type: 'object',
      properties: { maxEntriesPerJob: { type: 'integer', minimum: 1 }, rules: { type: 'array', items: { type: 'object' } } },
    },
    trustedOrigin: { type: 'object', properties: { isEnabled: { type: 'boolean' }, expressions: { type: 'array', items: { type: 'string' } } } },
  },
};

const TotpEnrolment: JsonSchema = {
  $id: schemaId('TotpEnrolment'),
  type: 'object',
  required: ['secret', 'uri'],
  additionalProperties: false,
  properties: {
    secret: { type: 'string', description: 'Base32, 160 bits.' },
    uri: { type: 'string', description: 'An `otpauth://totp/` URI (issuer mailverify, SHA-1, 6 digits, 30 s) for an authenticator app.' },
  },
};

const PassCode: JsonSchema = {
  $id: schemaId('PassCode'),
  type: 'object',
  required: ['passCode'],
  properties: { passCode: { type: 'string', description: 'The 6-digit code of the authenticator app.' } },
};

const amount = (description: string): JsonSchema => ({ type: 'number', minimum: 0, description });
const nullableAmount = (description: string): JsonSchema => ({ type: ['number', 'null'], minimum: 0, description });
const resetIn: JsonSchema = {
  type: ['string', 'null'],
  pattern: '^(\\d+\\.)?\\d{2}:\\d{2}:\\d{2}$',
  description: 'The time to the next UTC midnight, when the free credits are renewed (`hh:mm:ss`); null without free daily credits.',
};

/** A balance: the packs under `packs` (`creditPacks` in 2.x, `credits` in 1.4), free credits and their reset time. */
const balance = (id: string, packs: string, description: string): JsonSchema => ({
  $id: schemaId(id),
  type: 'object',
  description,
  required: [packs, 'freeCredits', 'freeCreditsResetIn'],
  additionalProperties: false,
  properties: {
    [packs]: amount('Credits of packs, which never expire.'),
    freeCredits: nullableAmount('Free credits left today (UTC); null without free daily credits.'),
    freeCreditsResetIn: resetIn,
  },
});
const CreditBalance = balance('CreditBalance', 'creditPacks', 'The account\'s credits now; reservations of running jobs count as spent.');
const LegacyAccountBalance = balance('LegacyAccountBalance', 'credits', 'The account balance in the 1.4 shape.');

const DailyUsage: JsonSchema = {
  $id: schemaId('DailyUsage'),
  type: 'object',
  description: 'The credits one UTC day consumed (reservations of running jobs included).',
  required: ['date', 'freeCredits', 'creditPacks'],
  additionalProperties: false,
  properties: {
    date: { type: 'string', format: 'date', description: 'The day (UTC), yyyy-mm-dd.' },
    freeCredits: amount('Free credits consumed.'),
    creditPacks: amount('Credits of packs consumed.'),
  },
};

const QualityLevel: JsonSchema = {
  $id: schemaId('QualityLevel'),
  type: 'object',
  required: ['id', 'displayName', 'isDefault', 'isCustom', 'unitPrice', 'isUnavailable'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, description: 'The name a submission gives as `quality` (compared without case).' },
    displayName: { type: 'string' },
    isDefault: flag('The quality of a job that names none.'),
    isCustom: flag('A level of the server\'s configuration, not one of Standard, High and Extreme.'),
    unitPrice: amount('Credits per entry.'),
    isUnavailable: { const: false },
  },
};

const QualityLevels: JsonSchema = {
  $id: schemaId('QualityLevels'),
  type: 'object',
  required: ['data'],
  additionalProperties: false,
  properties: { data: { type: 'array', items: ref('QualityLevel') } },
};

const CreditPack: JsonSchema = {
  $id: schemaId('CreditPack'),
  type: 'object',
  required: ['credits'],
  properties: { credits: { type: 'number', exclusiveMinimum: 0, description: 'The credits to add to the packs (at most six decimal places).' } },
};

const OverrideRule: JsonSchema = {
  $id: schemaId('OverrideRule'),
  type: 'object',
  description:
    'A classifier override rule: an address that parses and matches `match` gets the status OverrideMatch and this ' +
    'classification, with no DNS or SMTP work; the first matching rule of the list decides.',
  required: ['match', 'classification'],
  additionalProperties: false,
  properties: {
    match: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_PATTERN_LENGTH,
      description:
        'A wildcard pattern over the whole address as Safe deduplication compares it (no comments, needless quoting ' +
        'removed, the domain in lower-case ASCII, ASCII letters without case): `*` any run of characters, `?` one.',
    },
    classification: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_CLASSIFICATION_LENGTH,
      examples: CLASSIFICATIONS,
      description: 'Deliverable, Risky, Undeliverable, Unknown, or a custom name.',
    },
  },
};

const OverrideRules: JsonSchema = {
  $id: schemaId('OverrideRules'),
  type: 'array',
  maxItems: MAX_OVERRIDE_RULES,
  description: 'The account\'s override rules, in order.',
  items: ref('OverrideRule'),
};

/** Every shared schema, added to the server's Fastify instance (`addSchema`). */
export const SHARED_SCHEMAS: readonly JsonSchema[] = [
  Problem,
  Overview,
  Entry,
  Meta,
  page('EntryPage', 'Entry', 'A page of a job\'s entries.'),
  page('JobPage', 'Overview', 'A page of the caller\'s jobs.'),
  JobSnapshot,
  AccessToken,
  Credentials,
  SubmissionEntry,
  Submission,
  Callback,
  FileImportSettings,
  FileImport,
  LegacySubmission,
  LegacyEntry,
  LegacySnapshot,
  UserOverview,
  page('UserPage', 'UserOverview', 'A page of the account\'s users.'),
  UserDetail,
  TotpEnrolment,
  PassCode,
  CreditBalance,
  LegacyAccountBalance,
  DailyUsage,
  page('DailyUsagePage', 'DailyUsage', 'The days with consumption, oldest first.'),
  QualityLevel,
  QualityLevels,
  CreditPack,
  OverrideRule,
  OverrideRules,
];
