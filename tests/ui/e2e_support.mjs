// Shared by the dashboard's browser tests (dashboard_e2e.mjs, live_e2e.mjs): Debian's Chromium, headless, through
// playwright-core, and named checks that count failures instead of stopping at the first.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

/** Chromium's path ($CHROMIUM, else Debian's); exits 77 (ctest's skip) when it is not installed. */
export function chromiumOrSkip() {
  const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(chromiumPath)) {
    console.log(`SKIP: no Chromium at ${chromiumPath}`);
    process.exit(77);
  }
  return chromiumPath;
}

/** Headless Chromium at `executablePath`, without sandbox, GPU or background traffic. */
export function launchChromium(executablePath) {
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Named checks: `check(name, fn)` prints ok or FAIL and counts failures in `failures`. */
export function newChecks() {
  const checks = { failures: 0 };
  checks.check = async (name, fn) => {
    try {
      await fn();
      console.log(`ok   ${name}`);
    } catch (error) {
      checks.failures++;
      console.log(`FAIL ${name}: ${error.message}`);
    }
  };
  return checks;
}
