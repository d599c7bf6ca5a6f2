// deploy/: every Kubernetes manifest validated offline against the Kubernetes API schemas (the
// kubernetes-models package: the upstream OpenAPI schemas compiled with ajv), then the few facts the
// service depends on; the Dockerfile parsed (dockerfile-ast) and its stages checked. No docker daemon or
// cluster can run here, so neither is built nor applied.

import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { DockerfileParser } from 'dockerfile-ast';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Service } from 'kubernetes-models/v1/Service';
import { Secret } from 'kubernetes-models/v1/Secret';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { FLAG_NAMES } from '../../src/config.js';
import { HUGE_PAGE_TUNABLES } from '../../src/process/launch-env.js';

const DEPLOY = fileURLToPath(new URL('../../../deploy/', import.meta.url));
const K8S = `${DEPLOY}kubernetes/`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;
const MODELS: Record<string, new (data: Doc) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'v1 Secret': Secret,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

function loadAll(): Array<{ file: string; doc: Doc }> {
  const out: Array<{ file: string; doc: Doc }> = [];
  for (const file of readdirSync(K8S)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    for (const d of parseAllDocuments(readFileSync(K8S + file, 'utf8'))) {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
      out.push({ file, doc: d.toJS() });
    }
  }
  return out;
}

const docs = loadAll();
const ofKind = (kind: string) => docs.filter((d) => d.doc.kind === kind).map((d) => d.doc);

t.test('every manifest is valid against the Kubernetes schema of its kind', async (t) => {
  t.ok(docs.length >= 7, `${docs.length} documents`);
  for (const { file, doc } of docs) {
    const Model = MODELS[`${doc.apiVersion} ${doc.kind}`];
    t.ok(Model, `${file}: ${doc.apiVersion} ${doc.kind} is one of the kinds checked`);
    if (!Model) continue;
    t.doesNotThrow(() => new Model(doc).validate(), `${file}: ${doc.kind} ${doc.metadata?.name}`);
  }
});

t.test('the validator refuses what it should (it is not a no-op)', async (t) => {
  const good = ofKind('Deployment')[0];
  const bad = structuredClone(good);
  bad.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
  t.throws(() => new Deployment(bad).validate(), /containerPort must be integer/);
  const noSelector = structuredClone(good);
  delete noSelector.spec.selector;
  t.throws(() => new Deployment(noSelector).validate(), /selector/);
});

t.test('deployments: probes, the ledger secret, the serve flags, selectors', async (t) => {
  const secrets = new Map(ofKind('Secret').map((s: Doc) => [s.metadata.name, s]));
  const deployments = ofKind('Deployment');
  t.same(deployments.map((d: Doc) => d.metadata.name).sort(), ['cutout-cpu', 'cutout-gpu']);
  for (const d of deployments) {
    const pod = d.spec.template;
    t.match(pod.metadata.labels, d.spec.selector.matchLabels, `${d.metadata.name}: the selector matches the pod labels`);
    const c = pod.spec.containers[0];
    t.equal(c.readinessProbe.httpGet.path, '/readyz', 'readiness on /readyz');
    t.equal(c.livenessProbe.httpGet.path, '/healthz', 'liveness on /healthz');
    t.equal(c.ports[0].containerPort, 8080);
    const url = c.env.find((e: Doc) => e.name === 'CUTOUT_LEDGER_URL');
    const ref = url?.valueFrom?.secretKeyRef;
    t.ok(ref, 'the ledger URL comes from a Secret');
    t.ok(secrets.get(ref.name)?.stringData?.[ref.key]?.startsWith('postgres://'), `secret ${ref.name}/${ref.key} holds a postgres:// URL`);
    for (const arg of c.args.filter((a: string) => a.startsWith('--'))) t.ok(FLAG_NAMES.includes(arg.slice(2)), `${arg} is a serve flag`);
    t.ok(d.spec.template.spec.terminationGracePeriodSeconds > Number(c.args[c.args.indexOf('--drain-timeout') + 1]), 'the grace period outlasts the drain');
  }
  const gpu = deployments.find((d: Doc) => d.metadata.name === 'cutout-gpu').spec.template.spec.containers[0];
  t.equal(gpu.resources.limits['nvidia.com/gpu'], 1, 'the GPU variant asks for one nvidia.com/gpu');
  t.equal(gpu.image, 'cutout:cuda');
  t.ok(gpu.args.includes('--device') && gpu.args[gpu.args.indexOf('--device') + 1] === 'cuda', '--device cuda');
});

t.test('service, disruption budgets and the autoscaler point at the pods', async (t) => {
  const labels = ofKind('Deployment').map((d: Doc) => d.spec.template.metadata.labels);
  const [svc] = ofKind('Service');
  t.ok(
    labels.every((l: Doc) => Object.entries(svc.spec.selector).every(([k, v]) => l[k] === v)),
    'the Service selects the CPU and the GPU pods',
  );
  t.equal(svc.spec.ports[0].targetPort, 'http');
  for (const pdb of ofKind('PodDisruptionBudget')) {
    t.ok(
      labels.some((l: Doc) => Object.entries(pdb.spec.selector.matchLabels).every(([k, v]) => l[k] === v)),
      `${pdb.metadata.name} selects pods`,
    );
  }
  const [hpa] = ofKind('HorizontalPodAutoscaler');
  t.equal(hpa.spec.scaleTargetRef.name, 'cutout-cpu');
  t.equal(hpa.spec.metrics[0].pods.metric.name, 'cutout_queue_depth', 'scales on the /metrics queue-depth gauge');
});

t.test('Dockerfile: parses; a CPU and a CUDA runtime stage, fed by named build stages', async (t) => {
  const text = readFileSync(`${DEPLOY}Dockerfile`, 'utf8');
  const file = DockerfileParser.parse(text);
  const froms = file.getFROMs();
  const stages = froms.map((f) => f.getBuildStage()).filter((s): s is string => !!s);
  t.same(stages, ['build', 'cpu-app', 'cuda-app', 'cpu', 'cuda']);
  for (const instr of file.getInstructions()) {
    t.ok(
      ['FROM', 'RUN', 'COPY', 'ENV', 'WORKDIR', 'USER', 'EXPOSE', 'ENTRYPOINT', 'CMD', 'ARG'].includes(instr.getKeyword()),
      `known instruction ${instr.getKeyword()}`,
    );
    const from = /--from=(\S+)/.exec(instr.getTextContent())?.[1];
    if (instr.getKeyword() === 'COPY' && from) t.ok(stages.includes(from), `COPY --from=${from} names an earlier stage`);
  }
  const run = (stage: string) => {
    const i = stages.indexOf(stage);
    const start = froms[i]!.getRange().start.line;
    const end = froms[i + 1]?.getRange().start.line ?? Infinity;
    return file.getInstructions().filter((x) => x.getRange().start.line > start && x.getRange().start.line < end);
  };
  t.ok(
    run('cuda-app').some((i) => /npm run gpu/.test(i.getTextContent())),
    'the CUDA stage installs the provider with npm run gpu',
  );
  for (const stage of ['cpu', 'cuda']) {
    const instrs = run(stage);
    t.ok(
      instrs.some((i) => i.getKeyword() === 'USER'),
      `${stage}: runs as a non-root user`,
    );
    t.ok(
      instrs.some((i) => i.getKeyword() === 'ENTRYPOINT' && /dist\/src\/cli\/main\.js/.test(i.getTextContent())),
      `${stage}: the cutout CLI as entry point`,
    );
    t.notOk(
      instrs.some((i) => /npm ci|apt-get install/.test(i.getTextContent())),
      `${stage}: no build tools in the runtime image`,
    );
    // The entry point is node itself, not bin/cutout: the image sets what bin/cutout would.
    t.ok(
      instrs.some((i) => i.getKeyword() === 'ENV' && i.getTextContent().split(/\s+/).includes(`GLIBC_TUNABLES=${HUGE_PAGE_TUNABLES}`)),
      `${stage}: node gets bin/cutout's malloc tunable`,
    );
  }
});
