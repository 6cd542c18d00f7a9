"""A local single-node Apache Kafka broker in KRaft mode, run from Maven Central jars on Java 17.

No Docker and no tarball: Maven fetches the broker's jars once into the user cache; the broker's
config, data, log and pid file live under one folder. Used by `croupier kafka` and the tests.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
KEYSTORE_PASSWORD = "croupier-local"  # a local test broker's self-signed key, nothing secret
LOG4J_VERSION = "2.24.3"
MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"


class KafkaLocalError(RuntimeError):
    """A local broker could not be prepared, started or stopped; the message says why."""


@dataclass(frozen=True, kw_only=True)
class LocalBroker:
    """One local broker: where it lives and where it listens."""

    home: Path
    cache_dir: Path
    version: str
    port: int = 9092
    controller_port: int = 9093
    # A second client listener, SASL_PLAINTEXT with the PLAIN mechanism, accepting these
    # (user, password) pairs: to try a site's SASL client settings against a real broker.
    sasl_port: int | None = None
    sasl_users: tuple[tuple[str, str], ...] = ()
    # A TLS listener (SSL) with a self-signed certificate for 127.0.0.1, made with keytool;
    # clients trust it with ssl.ca.location = `ca_file`.
    ssl_port: int | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def sasl_bootstrap(self) -> str | None:
        return None if self.sasl_port is None else f"127.0.0.1:{self.sasl_port}"

    @property
    def ssl_bootstrap(self) -> str | None:
        return None if self.ssl_port is None else f"127.0.0.1:{self.ssl_port}"

    @property
    def ca_file(self) -> Path:
        return self.home / "ca.pem"

    @property
    def lib_dir(self) -> Path:
        return self.cache_dir / f"kafka-{self.version}" / "lib"

    @property
    def pid_file(self) -> Path:
        return self.home / "broker.pid"

    @property
    def log_file(self) -> Path:
        return self.home / "broker.log"

    @property
    def config_file(self) -> Path:
        return self.home / "server.properties"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"


def _require(tool: str, hint: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise KafkaLocalError(f"`{tool}` was not found on PATH: {hint}")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fetch_pinned(broker: LocalBroker, staging: Path) -> bool:
    """Put the pinned jars of this Kafka version into `staging`: from `~/.m2` when Maven
    already has them, else straight from Maven Central, 8 at a time, each checked against its
    pinned SHA-256. False when this version has no pinned list (Maven resolves it instead)."""
    from infra.kafka_jars import pinned

    jars = pinned(broker.version, LOG4J_VERSION)
    if jars is None:
        return False
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    m2 = Path.home() / ".m2" / "repository"

    def fetch(jar: tuple[str, str, str, str]) -> None:
        group, artifact, version, sha256 = jar
        name = f"{artifact}-{version}.jar"
        where = f"{group.replace('.', '/')}/{artifact}/{version}/{name}"
        target = staging / name
        local = m2 / where
        if local.is_file() and _sha256(local) == sha256:
            shutil.copyfile(local, target)
            return
        with urllib.request.urlopen(f"{MAVEN_CENTRAL}/{where}", timeout=60) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise KafkaLocalError(f"{MAVEN_CENTRAL}/{where} does not match its pinned SHA-256")
        target.write_bytes(data)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(fetch, jars))
    return True


def ensure_jars(broker: LocalBroker, *, quiet: bool = True) -> Path:
    """Fetch the broker's jars into the cache once; return the lib folder. A pinned Kafka
    version (infra/kafka_jars.py) is downloaded directly; any other, or when that fails
    (no direct access to Maven Central, say, but a Maven mirror), resolved with Maven."""
    done = broker.lib_dir / ".complete"
    if done.exists():
        return broker.lib_dir
    _require("java", "install a Java 17+ runtime (Debian: openjdk-17-jre-headless)")
    work = broker.lib_dir.parent
    work.mkdir(parents=True, exist_ok=True)
    staging = work / f"lib.partial-{os.getpid()}"
    failure: Exception | None = None
    try:
        fetched = _fetch_pinned(broker, staging)
    except (OSError, KafkaLocalError) as exc:  # URLError is an OSError
        fetched, failure = False, exc
    if not fetched:
        shutil.rmtree(staging, ignore_errors=True)
        if failure is not None and shutil.which("mvn") is None:
            raise KafkaLocalError(
                f"could not download the Kafka jars from Maven Central: {failure}"
            ) from failure
        _fetch_with_maven(broker, staging, quiet=quiet)
    if done.exists():  # another process finished first
        shutil.rmtree(staging, ignore_errors=True)
        return broker.lib_dir
    shutil.rmtree(broker.lib_dir, ignore_errors=True)
    staging.rename(broker.lib_dir)
    done.write_text(broker.version + "\n")
    return broker.lib_dir


def _fetch_with_maven(broker: LocalBroker, staging: Path, *, quiet: bool) -> None:
    mvn = _require("mvn", "install Apache Maven (Debian: maven) to fetch the Kafka jars")
    work = broker.lib_dir.parent
    # Kafka 4 still logs through SLF4J 1.x; its POM does not bring a binding, so we add log4j2's.
    (work / "pom.xml").write_text(
        f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.croupier</groupId><artifactId>kafka-broker</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId>
      <version>{broker.version}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId><version>{LOG4J_VERSION}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId><version>{LOG4J_VERSION}</version></dependency>
  </dependencies>
</project>
"""
    )
    cmd = [
        mvn,
        "-B",
        *(["-q"] if quiet else []),
        "-f",
        str(work / "pom.xml"),
        f"{DEPENDENCY_PLUGIN}:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={staging}",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-15:]
        raise KafkaLocalError(
            "Maven could not fetch the Kafka jars (is Maven Central reachable?):\n"
            + "\n".join(tail)
        )


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def running_pid(broker: LocalBroker) -> int | None:
    """The pid of the broker this folder started, if it is still that broker."""
    try:
        pid = int(broker.pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    # A recycled pid belongs to another program: only our java with our config file counts.
    if b"kafka.Kafka" in cmdline and str(broker.config_file).encode() in cmdline:
        return pid
    return None


def _write_config(broker: LocalBroker) -> None:
    broker.home.mkdir(parents=True, exist_ok=True)
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{broker.controller_port}",
        "listeners": (
            f"PLAINTEXT://127.0.0.1:{broker.port},CONTROLLER://127.0.0.1:{broker.controller_port}"
        ),
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{broker.port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(broker.data_dir),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "8",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "false",
        "message.max.bytes": str(2 * 1024 * 1024),
        # The events are the record (every derived table is rebuilt from them), and recordings
        # keep their own, older timestamps: nothing is deleted for its age.
        "log.retention.ms": "-1",
    }
    if broker.sasl_port is not None:
        sasl = f"SASL_PLAINTEXT://127.0.0.1:{broker.sasl_port}"
        users = " ".join(f'user_{name}="{password}"' for name, password in broker.sasl_users)
        props["listeners"] += "," + sasl
        props["advertised.listeners"] += "," + sasl
        props["listener.security.protocol.map"] += ",SASL_PLAINTEXT:SASL_PLAINTEXT"
        props["sasl.enabled.mechanisms"] = "PLAIN"
        props["listener.name.sasl_plaintext.plain.sasl.jaas.config"] = (
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};"
        )
    if broker.ssl_port is not None:
        keystore = _self_signed_keystore(broker)
        tls = f"SSL://127.0.0.1:{broker.ssl_port}"
        props["listeners"] += "," + tls
        props["advertised.listeners"] += "," + tls
        props["listener.security.protocol.map"] += ",SSL:SSL"
        props["ssl.keystore.type"] = "PKCS12"
        props["ssl.keystore.location"] = str(keystore)
        props["ssl.keystore.password"] = props["ssl.key.password"] = KEYSTORE_PASSWORD
    broker.config_file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    (broker.home / "log4j2.properties").write_text(
        "rootLogger.level = INFO\n"
        "rootLogger.appenderRef.stdout.ref = STDOUT\n"
        "appender.stdout.type = Console\n"
        "appender.stdout.name = STDOUT\n"
        "appender.stdout.layout.type = PatternLayout\n"
        "appender.stdout.layout.pattern = [%d] %p %m (%c)%n\n"
        "logger.kafka.name = kafka\nlogger.kafka.level = INFO\n"
        "logger.state.name = state.change.logger\nlogger.state.level = WARN\n"
    )


def _self_signed_keystore(broker: LocalBroker) -> Path:
    """The broker's key and certificate (127.0.0.1, localhost) in a PKCS12 keystore, and the
    certificate as PEM in `ca_file` for clients; made once per broker folder."""
    keystore = broker.home / "broker.p12"
    if keystore.exists() and broker.ca_file.exists():
        return keystore
    keytool = _require("keytool", "it comes with the Java runtime (openjdk-17-jre-headless)")
    common = ["-alias", "broker", "-keystore", str(keystore), "-storepass", KEYSTORE_PASSWORD]
    for args in (
        ["-genkeypair", "-keyalg", "RSA", "-keysize", "2048", "-validity", "3650",
         "-storetype", "PKCS12", "-dname", "CN=127.0.0.1",
         "-ext", "SAN=IP:127.0.0.1,DNS:localhost"],
        ["-exportcert", "-rfc", "-file", str(broker.ca_file)],
    ):  # fmt: skip
        result = subprocess.run([keytool, *args, *common], capture_output=True, text=True)
        if result.returncode != 0:
            raise KafkaLocalError(f"keytool {args[0]} failed:\n{result.stderr[-2000:]}")
    return keystore


def _cds_archive(broker: LocalBroker, java: str) -> Path:
    """Where the broker's class-data-sharing archive lives: one per Kafka version, jars and Java
    runtime (a runtime or jars that changed get a new archive instead of a refused one)."""
    java_path = Path(java).resolve()
    stamps = [str(java_path), str((broker.lib_dir / ".complete").stat().st_mtime_ns)]
    server = java_path.parent.parent / "lib" / "server"
    with contextlib.suppress(OSError):
        stamps += sorted(f"{f.name}:{f.stat().st_mtime_ns}" for f in server.iterdir())
    digest = hashlib.sha256("\n".join(stamps).encode()).hexdigest()[:16]
    return broker.lib_dir.parent / f"broker-{digest}.jsa"


def _cds_pending(broker: LocalBroker) -> Path:
    return broker.home / "cds-pending"


def _java_cmd(
    broker: LocalBroker, main_class: str, *args: str, short_lived: bool = False
) -> list[str]:
    java = _require("java", "install a Java 17+ runtime (Debian: openjdk-17-jre-headless)")
    # Class data sharing: the first broker that runs dumps the classes it loaded into an archive
    # when it exits (`stop` keeps it); every later JVM on these jars maps it and starts on about
    # 40 % less CPU (the broker: 7 -> 4 s here). A tool that runs for a few seconds (formatting
    # the storage) gains nothing from the optimising JIT compiler: C1 only.
    jvm = ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    archive = _cds_archive(broker, java)
    if archive.is_file():
        jvm.append(f"-XX:SharedArchiveFile={archive}")
    elif main_class == "kafka.Kafka":
        partial = archive.with_name(f"{archive.name}.{uuid.uuid4().hex[:8]}.partial")
        _cds_pending(broker).write_text(f"{partial}\n{archive}\n")
        jvm.append(f"-XX:ArchiveClassesAtExit={partial}")
    if short_lived:
        jvm.append("-XX:TieredStopAtLevel=1")
    return [
        java,
        "-Xms256m",
        "-Xmx768m",
        "-XX:+UseG1GC",
        *jvm,
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={broker.home / 'log4j2.properties'}",
        "-cp",
        f"{broker.lib_dir}/*",
        main_class,
        *args,
    ]


def _format_storage(broker: LocalBroker) -> None:
    if (broker.data_dir / "meta.properties").exists():
        return
    cluster_id = uuid.uuid4().hex[:22]
    cmd = _java_cmd(
        broker,
        "kafka.tools.StorageTool",
        "format",
        "--standalone",
        "-t",
        cluster_id,
        "-c",
        str(broker.config_file),
        short_lived=True,
    )
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise KafkaLocalError("formatting the KRaft storage failed:\n" + result.stderr[-2000:])


def broker_answers(bootstrap: str, timeout: float = 2.0) -> bool:
    """True when a metadata request to the broker succeeds."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    try:
        metadata = admin.list_topics(timeout=timeout)
    except Exception:
        return False
    return len(metadata.brokers) > 0


def start(broker: LocalBroker, *, timeout: float = 120.0) -> tuple[int, bool]:
    """Start the broker unless it already runs; return (pid, started_now)."""
    pid = running_pid(broker)
    if pid is not None:
        return pid, False
    _require("java", "install a Java 17+ runtime (Debian: openjdk-17-jre-headless)")
    ensure_jars(broker)
    for port in (broker.port, broker.controller_port, broker.sasl_port, broker.ssl_port):
        if port is not None and port_in_use(port):
            raise KafkaLocalError(
                f"port {port} on 127.0.0.1 is taken by another program; stop it, or choose "
                "other ports (CROUPIER_LOCAL_KAFKA_PORT / CROUPIER_LOCAL_KAFKA_CONTROLLER_PORT)"
            )
    _write_config(broker)
    _format_storage(broker)
    log = broker.log_file.open("ab")
    process = subprocess.Popen(
        _java_cmd(broker, "kafka.Kafka", str(broker.config_file)),
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    log.close()
    broker.pid_file.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            broker.pid_file.unlink(missing_ok=True)
            _keep_cds_archive(broker, complete=False)
            tail = broker.log_file.read_text(errors="replace").splitlines()[-20:]
            raise KafkaLocalError(
                f"the broker exited with code {process.returncode}; last log lines:\n"
                + "\n".join(tail)
            )
        if broker_answers(broker.bootstrap, timeout=1.0):
            return process.pid, True
        time.sleep(0.3)
    stop(broker)
    raise KafkaLocalError(
        f"the broker did not answer within {timeout:.0f} s; see {broker.log_file}"
    )


def stop(broker: LocalBroker, *, timeout: float = 30.0) -> bool:
    """Stop the broker this folder started; return False when none was running."""
    pid = running_pid(broker)
    if pid is None:
        broker.pid_file.unlink(missing_ok=True)
        _keep_cds_archive(broker, complete=False)  # it ended without us: no telling how
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and running_pid(broker) is not None:
        time.sleep(0.2)
    killed = running_pid(broker) is not None
    if killed:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)
    broker.pid_file.unlink(missing_ok=True)
    _keep_cds_archive(broker, complete=not killed)
    return True


def _keep_cds_archive(broker: LocalBroker, *, complete: bool) -> None:
    """After a broker that was dumping its class archive exited: keep the archive if the JVM
    finished writing it (a clean exit), else throw the half-written file away."""
    # archives of brokers that ended without `stop` (killed, crashed) are never kept: a JVM
    # writes its archive within seconds of exiting, so an old partial one is litter
    for litter in broker.lib_dir.parent.glob("broker-*.jsa.*.partial"):
        with contextlib.suppress(OSError):
            if time.time() - litter.stat().st_mtime > 600:
                litter.unlink()
    try:
        partial, archive = (Path(line) for line in _cds_pending(broker).read_text().split())
    except (FileNotFoundError, ValueError):
        return
    _cds_pending(broker).unlink(missing_ok=True)
    if complete and partial.is_file() and partial.stat().st_size > 0:
        partial.replace(archive)
    else:
        partial.unlink(missing_ok=True)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def available(bootstrap: str | None = None) -> Iterator[str]:
    """The address of a broker that answers: `bootstrap`, else the configured one, else a
    private broker started on free ports for the duration (tests and benchmarks)."""
    from infra.config import get_settings

    settings = get_settings()
    address = bootstrap or settings.kafka_bootstrap_servers
    if broker_answers(address, timeout=2.0):
        yield address
        return
    if bootstrap:
        raise KafkaLocalError(f"no Kafka broker answers at {bootstrap}")
    with tempfile.TemporaryDirectory(prefix="croupier-kafka-") as home:
        broker = LocalBroker(
            home=Path(home),
            cache_dir=settings.cache_dir,
            version=settings.local_kafka_version,
            port=free_port(),
            controller_port=free_port(),
        )
        start(broker)
        try:
            yield broker.bootstrap
        finally:
            stop(broker)


def from_settings() -> LocalBroker:
    """The local broker that the configuration describes."""
    from infra.config import get_settings

    settings = get_settings()
    return LocalBroker(
        home=settings.kafka_dir,
        cache_dir=settings.cache_dir,
        version=settings.local_kafka_version,
        port=settings.local_kafka_port,
        controller_port=settings.local_kafka_controller_port,
    )
