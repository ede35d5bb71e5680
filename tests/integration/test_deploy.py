# SPDX-License-Identifier: BSD-3-Clause
"""deploy/: host-prep.sh, install-service.sh and the systemd unit.

Nothing here changes the machine. Against the real /sys and /proc the scripts
run only with --dry-run (or fail validation first); real runs go to a fake
tree (HOST_PREP_ROOT, under which host-prep writes only files in that tree
and runs no command that changes anything) or to a temporary --destdir.
"""

import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
HOST_PREP = DEPLOY / "host-prep.sh"
INSTALL = DEPLOY / "install-service.sh"
UNIT = DEPLOY / "systemd" / "shardmark.service"
ENV_FILE = DEPLOY / "systemd" / "shardmark.env"
SCRIPTS = sorted(DEPLOY.glob("*.sh"))
HUGE_2M = Path("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")


def run(argv, env_extra=None, root=None, user=None, cwd=REPO, timeout=60):
    env = dict(os.environ)
    env.pop("HOST_PREP_ROOT", None)
    if root is not None:
        env["HOST_PREP_ROOT"] = str(root)
    env.update(env_extra or {})
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, errors="replace", timeout=timeout)


def host_prep(*args, **kw):
    return run([HOST_PREP, *args], **kw)


def dry_lines(out):
    return [l[len("DRY-RUN: "):] for l in out.splitlines() if l.startswith("DRY-RUN: ")]


def put(root, rel, text=""):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


@pytest.fixture
def fake(tmp_path):
    """A small machine: 4 CPUs with cpufreq, 2M hugepages, three IRQs, two NIC
    ports (0000:03:00.0 = eth0 carries the default route, 0000:03:00.1 =
    eth1 is free, with IRQs 10 and 11), no IOMMU."""
    r = tmp_path / "root"
    put(r, "sys/devices/system/cpu/online", "0-3\n")
    put(r, "sys/devices/system/cpu/isolated", "\n")
    for c in range(4):
        put(r, f"sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor", "powersave\n")
        put(r, f"sys/devices/system/cpu/cpu{c}/cpufreq/scaling_available_governors",
            "performance powersave\n")
    put(r, "sys/devices/system/node/online", "0\n")
    put(r, "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "0\n")
    put(r, "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "0\n")
    put(r, "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "0\n")
    (r / "sys/kernel/iommu_groups").mkdir(parents=True)
    put(r, "proc/meminfo", "MemTotal:       16000000 kB\nHugepagesize:       2048 kB\n")
    put(r, "proc/mounts", "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n")
    put(r, "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet\n")
    put(r, "proc/irq/default_smp_affinity", "f\n")
    for irq, aff, name in [(10, "0-3", "eth1-TxRx-0"), (11, "2", "eth1-TxRx-1"),
                           (12, "0", "timer")]:
        put(r, f"proc/irq/{irq}/smp_affinity_list", aff + "\n")
        (r / f"proc/irq/{irq}/{name}").mkdir()
    put(r, "proc/net/route",
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        "eth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
        "eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
    put(r, "proc/net/ipv6_route", "")
    for fn, iface in [(0, "eth0"), (1, "eth1")]:
        pci = f"sys/bus/pci/devices/0000:03:00.{fn}"
        put(r, f"{pci}/class", "0x020000\n")
        put(r, f"{pci}/modalias", "pci:v00008086d000010FBsv00008086sd00000003bc02sc00i00\n")
        (r / pci / "net" / iface).mkdir(parents=True)
        (r / "sys/class/net" / iface / "device").mkdir(parents=True)
    for irq in (10, 11):
        (r / "sys/class/net/eth1/device/msi_irqs").mkdir(exist_ok=True)
        put(r, f"sys/class/net/eth1/device/msi_irqs/{irq}", "msix\n")
    return r


# --- every script: syntax and shellcheck -------------------------------------

@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_bash_syntax(script):
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n"), script
    assert "set -euo pipefail" in text, script
    assert os.access(script, os.X_OK), f"{script} is not executable"


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_shellcheck(script):
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    r = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_help():
    for script in (HOST_PREP, INSTALL):
        r = run([script, "--help"])
        assert r.returncode == 0, r.stderr
        assert "--dry-run" in r.stdout, r.stdout


# --- host-prep on this machine: dry runs and validation only -----------------

def test_hugepages_dry_run_prints_sysfs_write():
    if not HUGE_2M.exists():
        pytest.skip(f"no 2M hugepages on this kernel ({HUGE_2M} is missing)")
    before = HUGE_2M.read_text().strip()
    want = int(before) + 7
    r = host_prep("hugepages", "--pages", want, "--size", "2M", "--dry-run")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"echo {want} > {HUGE_2M}" in dry_lines(r.stdout), r.stdout
    assert HUGE_2M.read_text().strip() == before, "a dry run changed nr_hugepages"


def test_hugepages_rejects_bad_size():
    r = host_prep("hugepages", "--size", "3M", "--dry-run")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "use 2M or 1G" in r.stderr, r.stderr


@pytest.mark.parametrize("addr,rc,msg", [
    ("0000:ff:1f.7", 1, "no PCI device 0000:ff:1f.7"),
    ("ff:1e.6", 1, "no PCI device 0000:ff:1e.6"),
    ("not-a-pci", 2, "is not a PCI address"),
], ids=["absent", "short-absent", "malformed"])
def test_bind_nic_bogus_address(addr, rc, msg):
    r = host_prep("bind-nic", addr, "--dry-run")
    assert r.returncode == rc, r.stdout + r.stderr
    assert msg in r.stderr, r.stderr
    assert "lspci" in r.stderr or "dpdk-devbind" in r.stderr, r.stderr  # how to find one
    assert not dry_lines(r.stdout), r.stdout


def test_unbind_nic_bogus_address():
    r = host_prep("unbind-nic", "0000:ff:1f.7", "--dry-run")
    assert r.returncode == 1 and "no PCI device" in r.stderr, r.stdout + r.stderr


def test_status_on_this_machine():
    r = host_prep("status")
    assert r.returncode == 0, r.stdout + r.stderr
    for section in ("== hugepages", "== NICs", "== CPU isolation", "== IRQs",
                    "== CPU frequency governor"):
        assert section in r.stdout, r.stdout


def test_isolate_cpus_only_prints():
    cpus = sorted(os.sched_getaffinity(0))
    online = Path("/sys/devices/system/cpu/online").read_text().strip()
    if online in ("0", ""):
        pytest.skip("one CPU: nothing to isolate")
    last = max(int(p.split("-")[-1]) for p in online.split(","))
    r = host_prep("isolate-cpus", str(last))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"nohz_full={last}" in r.stdout or "already" in r.stdout, r.stdout
    if "already" not in r.stdout:
        assert "cannot change it" in r.stdout and "update-grub" in r.stdout, r.stdout
    assert cpus == sorted(os.sched_getaffinity(0))


def test_not_root_is_refused():
    """A real run as an unprivileged user stops before touching anything."""
    if not HUGE_2M.exists():
        pytest.skip(f"no 2M hugepages on this kernel ({HUGE_2M} is missing)")
    user = None
    script = HOST_PREP
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv (util-linux) to drop privileges")
        user = 65534
        # a copy that the unprivileged user can read wherever the checkout is
        d = Path(tempfile.mkdtemp(prefix="host-prep-"))
        d.chmod(0o755)
        script = d / "host-prep.sh"
        shutil.copy(HOST_PREP, script)
        script.chmod(0o755)
    before = HUGE_2M.read_text()
    try:
        r = run([script, "hugepages", "--pages", int(before) + 3], user=user, cwd="/")
    finally:
        if user is not None:
            shutil.rmtree(script.parent)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "needs root" in r.stderr and "--dry-run" in r.stderr, r.stderr
    assert HUGE_2M.read_text() == before


def test_usage_errors():
    r = host_prep()
    assert r.returncode == 2 and "give a command" in r.stderr, r.stderr
    r = host_prep("frobnicate")
    assert r.returncode == 2 and "unknown command" in r.stderr, r.stderr
    r = host_prep("irq-affinity", "9-2", "--dry-run")
    assert r.returncode == 2 and "not a CPU list" in r.stderr, r.stderr
    r = host_prep("irq-affinity", "4096", "--dry-run")
    assert r.returncode == 1 and "not online" in r.stderr, r.stderr


# --- host-prep against a fake machine: real runs, idempotence ----------------

def test_fake_hugepages_write_and_idempotent(fake):
    nr = fake / "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
    r = host_prep("hugepages", "--pages", "512", "--dry-run", root=fake)
    assert r.returncode == 0, r.stderr
    assert f"echo 512 > {nr}" in dry_lines(r.stdout), r.stdout
    assert nr.read_text() == "0\n"
    r = host_prep("hugepages", "--pages", "512", root=fake)
    assert r.returncode == 0, r.stderr
    assert nr.read_text().strip() == "512"
    assert "mounted on /dev/hugepages" in r.stdout, r.stdout
    r = host_prep("hugepages", "--pages", "512", root=fake)
    assert r.returncode == 0, r.stderr
    assert "already reserved" in r.stdout and "+ echo" not in r.stdout, r.stdout


def test_fake_hugepages_node_and_mount(fake):
    node = fake / "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages"
    (fake / "proc/mounts").write_text("")
    r = host_prep("hugepages", "--pages", "64", "--node", "0", "--dry-run", root=fake)
    assert r.returncode == 0, r.stderr
    lines = dry_lines(r.stdout)
    assert f"echo 64 > {node}" in lines, r.stdout
    assert "mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages" in lines, r.stdout
    r = host_prep("hugepages", "--node", "3", "--dry-run", root=fake)
    assert r.returncode == 1 and "no NUMA node 3" in r.stderr, r.stderr
    r = host_prep("hugepages", "--size", "1G", "--dry-run", root=fake)
    assert r.returncode == 1 and "no 1G hugepages" in r.stderr, r.stderr


def test_fake_bind_nic_refuses_default_route(fake):
    r = host_prep("bind-nic", "0000:03:00.0", "--dry-run", root=fake)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "carries the default route" in r.stderr and "--force" in r.stderr, r.stderr
    assert not dry_lines(r.stdout)


def test_fake_bind_nic_no_iommu(fake):
    r = host_prep("bind-nic", "03:00.1", "--dry-run", root=fake)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "no IOMMU" in r.stderr and "intel_iommu=on" in r.stderr, r.stderr
    assert "--noiommu" in r.stderr, r.stderr
    r = host_prep("bind-nic", "03:00.1", "--noiommu", "--dry-run", root=fake)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dry_lines(r.stdout)
    assert "modprobe vfio enable_unsafe_noiommu_mode=1" in lines, r.stdout
    assert "modprobe vfio-pci" in lines, r.stdout
    assert any(re.fullmatch(r"\S*dpdk-devbind(\.py)? --bind=vfio-pci 0000:03:00\.1", l)
               for l in lines), r.stdout


def test_fake_bind_nic_with_iommu_and_idempotent(fake):
    (fake / "sys/kernel/iommu_groups/7/devices").mkdir(parents=True)
    (fake / "sys/bus/pci/devices/0000:03:00.1/iommu_group").mkdir()
    r = host_prep("bind-nic", "0000:03:00.1", "--dry-run", root=fake)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dry_lines(r.stdout)
    assert lines[0] == "modprobe vfio-pci", r.stdout
    assert lines[-1].endswith("--bind=vfio-pci 0000:03:00.1"), r.stdout
    # already on vfio-pci: nothing to do
    drivers = fake / "sys/bus/pci/drivers/vfio-pci"
    drivers.mkdir(parents=True)
    (fake / "sys/bus/pci/devices/0000:03:00.1/driver").symlink_to(drivers)
    r = host_prep("bind-nic", "0000:03:00.1", root=fake)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "already bound to vfio-pci" in r.stdout, r.stdout
    # and back: the kernel driver comes from --driver (or what bind-nic recorded)
    r = host_prep("unbind-nic", "0000:03:00.1", "--driver", "ixgbe", "--dry-run", root=fake)
    assert r.returncode == 0, r.stdout + r.stderr
    assert dry_lines(r.stdout)[-1].endswith("--bind=ixgbe 0000:03:00.1"), r.stdout
    put(fake, "run/shardmark/nic-0000:03:00.1.driver", "ixgbe\n")
    r = host_prep("unbind-nic", "0000:03:00.1", "--dry-run", root=fake)
    assert r.returncode == 0, r.stdout + r.stderr
    assert any(l.endswith("--bind=ixgbe 0000:03:00.1") for l in dry_lines(r.stdout)), r.stdout


def test_fake_bind_nic_missing_tool_names_package(fake):
    if any(shutil.which(t) for t in ("dpdk-devbind.py", "dpdk-devbind")):
        pytest.skip("dpdk-devbind.py is installed here")
    (fake / "sys/kernel/iommu_groups/7").mkdir(parents=True)
    (fake / "sys/bus/pci/devices/0000:03:00.1/iommu_group").mkdir()
    r = host_prep("bind-nic", "0000:03:00.1", root=fake)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "apt-get install dpdk" in r.stderr, r.stderr


def test_fake_isolate_cpus(fake):
    r = host_prep("isolate-cpus", "2-3", "--dry-run", root=fake)
    assert r.returncode == 0, r.stderr
    want = "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1"
    assert want in r.stdout and "GRUB_CMDLINE_LINUX_DEFAULT" in r.stdout, r.stdout
    assert "a running kernel" in r.stdout and not dry_lines(r.stdout), r.stdout
    (fake / "proc/cmdline").write_text("quiet " + want + "\n")
    r = host_prep("isolate-cpus", "2-3", root=fake)
    assert r.returncode == 0 and "ok:" in r.stdout, r.stdout
    r = host_prep("isolate-cpus", "0-3", root=fake)
    assert r.returncode == 1 and "every online CPU" in r.stderr, r.stderr
    r = host_prep("isolate-cpus", "2-5", root=fake)
    assert r.returncode == 1 and "CPU 4, which is not online" in r.stderr, r.stderr


def test_fake_irq_affinity_and_idempotent(fake):
    put(fake, "proc/4242/comm", "irqbalance\n")
    r = host_prep("irq-affinity", "2-3", "--dry-run", root=fake)
    assert r.returncode == 0, r.stderr
    lines = dry_lines(r.stdout)
    assert "kill 4242" in lines, r.stdout
    assert f"echo 3 > {fake}/proc/irq/default_smp_affinity" in lines, r.stdout
    assert f"echo 0-1 > {fake}/proc/irq/10/smp_affinity_list" in lines, r.stdout
    assert f"echo 0-1 > {fake}/proc/irq/11/smp_affinity_list" in lines, r.stdout
    assert not any("/irq/12/" in l for l in lines), r.stdout  # already off 2-3
    assert (fake / "proc/irq/10/smp_affinity_list").read_text() == "0-3\n"

    (fake / "proc/4242/comm").unlink()
    r = host_prep("irq-affinity", "2-3", root=fake)
    assert r.returncode == 0, r.stderr
    assert (fake / "proc/irq/10/smp_affinity_list").read_text() == "0-1\n"
    assert (fake / "proc/irq/11/smp_affinity_list").read_text() == "0-1\n"
    assert (fake / "proc/irq/12/smp_affinity_list").read_text() == "0\n"
    assert (fake / "proc/irq/default_smp_affinity").read_text() == "3\n"
    r = host_prep("irq-affinity", "2-3", root=fake)
    assert r.returncode == 0, r.stderr
    assert "moved 0 IRQ(s)" in r.stdout and "+ echo" not in r.stdout, r.stdout


def test_fake_irq_affinity_one_nic(fake):
    r = host_prep("irq-affinity", "0-1", "--nic", "eth1", "--irq-cpus", "3", "--dry-run",
                  root=fake)
    assert r.returncode == 0, r.stderr
    lines = dry_lines(r.stdout)
    assert lines == [f"echo 3 > {fake}/proc/irq/10/smp_affinity_list"], r.stdout
    r = host_prep("irq-affinity", "--nic", "eth1", "--irq-cpus", "1", "--dry-run", root=fake)
    assert r.returncode == 0, r.stderr
    assert dry_lines(r.stdout) == [f"echo 1 > {fake}/proc/irq/10/smp_affinity_list",
                                   f"echo 1 > {fake}/proc/irq/11/smp_affinity_list"], r.stdout
    r = host_prep("irq-affinity", "--nic", "eth1", "--dry-run", root=fake)
    assert r.returncode == 2 and "give the shard CPUs" in r.stderr, r.stderr
    r = host_prep("irq-affinity", "2-3", "--nic", "eth9", "--dry-run", root=fake)
    assert r.returncode == 1 and "no network interface 'eth9'" in r.stderr, r.stderr
    r = host_prep("irq-affinity", "2-3", "--irq-cpus", "3", "--dry-run", root=fake)
    assert r.returncode == 2 and "overlaps" in r.stderr, r.stderr


def test_fake_governor_and_idempotent(fake):
    gov = fake / "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor"
    r = host_prep("governor", "performance", "--dry-run", root=fake)
    assert r.returncode == 0, r.stderr
    assert len(dry_lines(r.stdout)) == 4 and f"echo performance > {gov}" in dry_lines(r.stdout)
    assert gov.read_text() == "powersave\n"
    r = host_prep("governor", "performance", root=fake)
    assert r.returncode == 0 and gov.read_text() == "performance\n", r.stderr
    r = host_prep("governor", "performance", root=fake)
    assert r.returncode == 0 and "set 0 CPU(s)" in r.stdout, r.stdout
    r = host_prep("governor", "ondemand", "--dry-run", root=fake)
    assert r.returncode == 1 and "no 'ondemand' governor" in r.stderr, r.stderr


def test_fake_status(fake):
    r = host_prep("status", "--cpus", "2-3", root=fake)
    assert r.returncode == 0, r.stderr
    assert "0000:03:00.0 driver=none if=eth0 (default route)" in r.stdout, r.stdout
    assert "IOMMU: off" in r.stdout, r.stdout
    assert "2 of 3 IRQs may run on the shard CPUs 2-3" in r.stdout, r.stdout
    assert "powersave: 4 CPU(s)" in r.stdout, r.stdout


def test_fake_all_from_env_file(fake, tmp_path):
    env = tmp_path / "shardmark.env"
    text = ENV_FILE.read_text().replace('SHARDMARK_ARGS=\n',
                                        'SHARDMARK_ARGS="--smp 2 --cpuset 2-3"\n')
    env.write_text(text)
    r = host_prep("all", "--config", env, "--dry-run", root=fake)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dry_lines(r.stdout)
    assert "shard CPUs 2-3" in r.stdout, r.stdout
    assert any(l.startswith("echo performance > ") for l in lines), r.stdout
    assert f"echo 0-1 > {fake}/proc/irq/10/smp_affinity_list" in lines, r.stdout
    assert "hugepages: skipped" in r.stdout and "bind-nic: skipped" in r.stdout, r.stdout
    assert "nohz_full=2-3" in r.stdout, r.stdout

    (fake / "sys/kernel/iommu_groups/7").mkdir(parents=True)
    (fake / "sys/bus/pci/devices/0000:03:00.1/iommu_group").mkdir()
    env.write_text(text.replace("SHARDMARK_NETWORK_STACK=uring", "SHARDMARK_NETWORK_STACK=dpdk")
                   .replace("HOST_PREP_NIC_PCI=", "HOST_PREP_NIC_PCI=0000:03:00.1"))
    r = host_prep("all", "--config", env, "--dry-run", root=fake)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dry_lines(r.stdout)
    assert f"echo 1024 > {fake}/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages" in lines
    assert lines[-1].endswith("--bind=vfio-pci 0000:03:00.1"), r.stdout

    env.write_text(text + "HOST_PREP_CPU=1\n")
    r = host_prep("all", "--config", env, "--dry-run", root=fake)
    assert r.returncode == 1 and "unknown key HOST_PREP_CPU" in r.stderr, r.stderr


# --- install-service.sh --------------------------------------------------------

@pytest.fixture
def fake_binary(tmp_path):
    b = tmp_path / "shardmark"
    b.write_text("#!/bin/sh\necho shardmark 0.0.0-test\n")
    b.chmod(0o755)
    return b


EXPECTED_FILES = ["usr/local/bin/shardmark", "usr/local/sbin/shardmark-host-prep",
                  "etc/systemd/system/shardmark.service", "etc/default/shardmark",
                  "etc/shardmark/shardmark.yaml"]


def test_install_service_dry_run_lists_files(tmp_path, fake_binary):
    dest = tmp_path / "dest"
    dest.mkdir()
    r = run([INSTALL, "--dry-run", "--destdir", dest, "--binary", fake_binary])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dry_lines(r.stdout)
    for f in EXPECTED_FILES:
        assert any(l.endswith(f" {dest}/{f}") for l in lines), (f, r.stdout)
    assert not any("systemctl" in l for l in lines), r.stdout
    assert list(dest.iterdir()) == [], "a dry run wrote into DESTDIR"


def test_install_service_destdir_and_idempotent(tmp_path, fake_binary):
    dest = tmp_path / "dest"
    r = run([INSTALL, "--destdir", dest, "--binary", fake_binary, "--cpu-affinity", "2-9,12"])
    assert r.returncode == 0, r.stdout + r.stderr
    for f in EXPECTED_FILES:
        assert (dest / f).is_file(), f
    assert stat.S_IMODE((dest / EXPECTED_FILES[0]).stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "etc/shardmark/shardmark.yaml").stat().st_mode) == 0o640
    assert (dest / "etc/systemd/system/shardmark.service").read_text() == UNIT.read_text()
    dropin = dest / "etc/systemd/system/shardmark.service.d/cpu-affinity.conf"
    assert "CPUAffinity=2-9 12" in dropin.read_text()
    # local edits of the configuration survive a second run; nothing else changes
    envf = dest / "etc/default/shardmark"
    envf.write_text(envf.read_text() + "SHARDMARK_ARGS=--smp 4\n")
    r = run([INSTALL, "--destdir", dest, "--binary", fake_binary, "--cpu-affinity", "2-9,12"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "+ install" not in r.stdout, r.stdout
    assert "is kept" in r.stdout and "--smp 4" in envf.read_text(), r.stdout


def test_install_service_prefix_rewrites_unit(tmp_path, fake_binary):
    dest = tmp_path / "dest"
    r = run([INSTALL, "--destdir", dest, "--binary", fake_binary, "--prefix", "/opt/sm"])
    assert r.returncode == 0, r.stdout + r.stderr
    unit = (dest / "etc/systemd/system/shardmark.service").read_text()
    assert "ExecStart=/opt/sm/bin/shardmark serve " in unit, unit
    assert (dest / "opt/sm/bin/shardmark").is_file()


def test_install_service_errors(tmp_path, fake_binary):
    r = run([INSTALL, "--dry-run", "--binary", tmp_path / "nope"])
    assert r.returncode == 1 and "not an executable file" in r.stderr, r.stderr
    r = run([INSTALL, "--destdir", tmp_path / "d", "--binary", fake_binary, "--start"])
    assert r.returncode == 2 and "not with --destdir" in r.stderr, r.stderr
    r = run([INSTALL, "--bogus"])
    assert r.returncode == 2 and "unknown argument" in r.stderr, r.stderr
    assert not (tmp_path / "d").exists()


# --- the unit and its environment file -----------------------------------------

def test_env_file_syntax():
    keys = {}
    for n, line in enumerate(ENV_FILE.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.fullmatch(r"([A-Z_][A-Z0-9_]*)=(.*)", line)
        assert m, f"shardmark.env:{n}: not KEY=VALUE: {line!r}"
        keys[m.group(1)] = m.group(2)
    assert keys["SHARDMARK_NETWORK_STACK"] == "uring"
    assert "SHARDMARK_ARGS" in keys


def test_unit_command_line_is_accepted(shardmark_bin):
    """ExecStart's options, with the env file's values and its example
    SHARDMARK_ARGS, are ones `shardmark serve` accepts."""
    unit = UNIT.read_text()
    m = re.search(r"^ExecStart=(\S+) (.*)$", unit, re.M)
    assert m and m.group(1) == "/usr/local/bin/shardmark", unit
    args = m.group(2).replace("/etc/shardmark/shardmark.yaml", str(REPO / "config/shardmark.yaml"))
    args = args.replace("${SHARDMARK_NETWORK_STACK}", "uring")
    example = re.search(r'^#\s+SHARDMARK_ARGS="([^"]*)"', ENV_FILE.read_text(), re.M).group(1)
    args = args.replace("$SHARDMARK_ARGS", example)
    r = subprocess.run([str(shardmark_bin), *args.split(), "--print-config"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "network_stack: uring" in r.stdout, r.stdout


def test_systemd_analyze_verify(tmp_path, shardmark_bin):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    # verify wants ExecStart's binary to exist: point it at the build's
    unit = tmp_path / "shardmark.service"
    unit.write_text(UNIT.read_text().replace("/usr/local/bin/shardmark", str(shardmark_bin)))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                       capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "shardmark.service" not in out, out  # no warning about the unit
