import { execFileSync } from "node:child_process"

/**
 * Installs Debian packages with apt-get (`apt-get update`, then `apt-get install -y --no-install-recommends`), for the
 * test global setups that install what their tests drive when it is missing (Chromium, InfluxDB clients), so that a
 * fresh machine running as root runs those tests instead of skipping them. Waits up to 5 minutes for the dpkg lock
 * and 15 minutes for each apt-get step. Throws when apt-get fails, with `why` (what needs the packages) and the
 * remedy in the message and apt-get's error as the cause.
 */
export const aptInstall = (packages: ReadonlyArray<string>, why: string): void => {
  const apt = (args: ReadonlyArray<string>) =>
    execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=300", ...args], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      timeout: 15 * 60_000
    })
  try {
    apt(["update"])
    apt(["install", "-y", "--no-install-recommends", ...packages])
  } catch (cause) {
    throw new Error(
      `${why}; installing them with apt-get failed (run the tests as root on Debian, or install them yourself).`,
      { cause }
    )
  }
}
