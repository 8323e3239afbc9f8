import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';

// deploy/ cannot run here (no Docker engine, no cluster): check that what is committed is what
// deploy/generate.mjs writes, that it parses, and that its references hold together.
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const deployDir = path.join(repo, 'deploy');

interface Generator {
  render(): Promise<Record<string, string>>;
  listServices(): string[];
}
const generator = (await import(new URL('../../../deploy/generate.mjs', import.meta.url).href)) as Generator;
const services = generator.listServices();

type Doc = Record<string, any>;
function load(file: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(path.join(deployDir, file), 'utf8'), { merge: true });
  return docs.map((doc) => {
    assert.deepEqual(doc.errors, [], `${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS({ maxAliasCount: 100 }) as Doc;
  });
}

test('the committed manifests are what deploy/generate.mjs writes (run it after adding a service)', async () => {
  const files = await generator.render();
  for (const [file, text] of Object.entries(files)) {
    const target = path.join(deployDir, file);
    assert.ok(existsSync(target), `deploy/${file} is missing: run \`node deploy/generate.mjs\``);
    assert.equal(readFileSync(target, 'utf8'), text, `deploy/${file} is out of date: run \`node deploy/generate.mjs\``);
  }
  for (const file of readdirSync(path.join(deployDir, 'k8s'))) {
    assert.ok(`k8s/${file}` in files, `deploy/k8s/${file} is not generated: run \`node deploy/generate.mjs\``);
  }
});

test('the services deployed are the workspaces with an entry point, the gateway among them', () => {
  assert.ok(services.includes('gateway'), services.join());
  assert.ok(existsSync(path.join(repo, 'services/pipelines/src/workers/main.ts')), 'the standalone worker entry');
});

test('docker-compose.yml: NATS, pgvector Postgres, the migrate one-shot, a service per workspace, workers', () => {
  const [compose] = load('docker-compose.yml');
  const defined = compose!.services as Record<string, Doc>;
  for (const name of ['nats', 'postgres', 'migrate', 'pipeline-workers', ...services]) assert.ok(defined[name], name);
  assert.match(defined.postgres!.image, /^pgvector\/pgvector:/);
  assert.deepEqual(defined.nats!.command, ['-c', '/etc/nats/nats.conf']);
  for (const name of services) {
    const svc = defined[name]!;
    assert.deepEqual(svc.command, ['node', `services/${name}/dist/main.js`]);
    assert.equal(svc.build.dockerfile, 'deploy/Dockerfile');
    for (const key of ['MEMEX_NATS_URL', 'MEMEX_DATABASE_URL', 'MEMEX_HOME'])
      assert.ok(svc.environment[key], `${name} ${key}`);
    assert.deepEqual(svc.depends_on.migrate, { condition: 'service_completed_successfully' });
  }
  assert.equal(defined['pipeline-workers']!.deploy.replicas, 2);
  assert.equal(defined.pipelines!.environment.MEMEX_PIPELINE_WORKERS, '0');
  const volumes = new Set(Object.keys(compose!.volumes));
  for (const [name, svc] of Object.entries(defined)) {
    for (const dep of Object.keys(svc.depends_on ?? {})) assert.ok(defined[dep], `${name} depends on unknown ${dep}`);
    for (const mount of (svc.volumes ?? []) as string[]) {
      const source = mount.split(':')[0]!;
      if (source.startsWith('.')) assert.ok(existsSync(path.join(deployDir, source)), `${name}: ${source}`);
      else assert.ok(volumes.has(source), `${name} mounts undeclared volume ${source}`);
    }
  }
  assert.match(defined.gateway!.ports[0], /^127\.0\.0\.1:\$\{MEMEX_PORT:-7777\}:7777$/);
});

test('k8s: namespaced objects, references that resolve, stateful NATS and Postgres, GPU workers', () => {
  const files = readdirSync(path.join(deployDir, 'k8s')).filter((f) => f !== 'kustomization.yaml');
  const [kustomization] = load('k8s/kustomization.yaml');
  assert.deepEqual([...kustomization!.resources].sort(), [...files].sort());
  const docs = files.flatMap((f) => load(`k8s/${f}`));
  const byKind = (kind: string) =>
    new Map(docs.filter((d) => d.kind === kind).map((d) => [d.metadata.name as string, d]));
  for (const doc of docs) {
    assert.ok(doc.apiVersion && doc.kind && doc.metadata?.name, JSON.stringify(doc).slice(0, 80));
    if (doc.kind !== 'Namespace') assert.equal(doc.metadata.namespace, 'memex', `${doc.kind}/${doc.metadata.name}`);
  }
  const configMaps = byKind('ConfigMap');
  const secrets = byKind('Secret');
  const claims = byKind('PersistentVolumeClaim');
  const deployments = byKind('Deployment');
  const statefulSets = byKind('StatefulSet');

  for (const name of services) {
    const container = deployments.get(name)?.spec.template.spec.containers[0];
    assert.deepEqual(container?.command, ['node', `services/${name}/dist/main.js`], name);
  }
  for (const set of ['nats', 'postgres']) assert.equal(statefulSets.get(set)?.spec.volumeClaimTemplates.length, 1, set);
  assert.match(statefulSets.get('postgres')!.spec.template.spec.containers[0].image, /^pgvector\/pgvector:/);
  assert.deepEqual(claims.get('memex-data')?.spec.accessModes, ['ReadWriteMany']);
  assert.ok(byKind('Service').get('gateway'));
  assert.ok(byKind('Job').get('migrate'));

  const gpu = deployments.get('pipeline-workers-gpu')!.spec.template.spec;
  assert.equal(gpu.containers[0].resources.limits['nvidia.com/gpu'], 1);
  assert.ok(gpu.nodeSelector && gpu.tolerations.some((t: Doc) => t.key === 'nvidia.com/gpu'));
  assert.ok(deployments.get('pipeline-workers'));

  for (const workload of [...deployments.values(), ...statefulSets.values(), ...byKind('Job').values()]) {
    const pod = workload.spec.template.spec;
    for (const volume of pod.volumes ?? []) {
      if (volume.configMap) assert.ok(configMaps.has(volume.configMap.name), volume.configMap.name);
      if (volume.persistentVolumeClaim) assert.ok(claims.has(volume.persistentVolumeClaim.claimName));
    }
    for (const container of pod.containers) {
      for (const from of container.envFrom ?? []) {
        if (from.configMapRef) assert.ok(configMaps.has(from.configMapRef.name));
        if (from.secretRef) assert.ok(secrets.has(from.secretRef.name));
      }
      for (const env of container.env ?? []) {
        const ref = env.valueFrom?.secretKeyRef;
        if (ref) assert.ok(secrets.get(ref.name)?.stringData[ref.key], `${ref.name}.${ref.key}`);
      }
    }
  }
});

test('the Dockerfile has the stages the manifests and docs name', () => {
  const dockerfile = readFileSync(path.join(deployDir, 'Dockerfile'), 'utf8');
  const stages = [...dockerfile.matchAll(/^FROM \S+ AS (\S+)$/gm)].map((m) => m[1]);
  for (const stage of ['build', 'runtime', 'runtime-gpu']) assert.ok(stages.includes(stage), stage);
  assert.match(dockerfile, /ONNXRUNTIME_NODE_INSTALL=skip/);
});
