# The solrace server's image (compose.yaml builds it: `docker compose up`). The package is built
# and installed here, once, from a copy of the tree (.dockerignore lists what is copied): nothing
# of the operator's checkout is mounted or written at run time, and a restarted container starts
# at once, with no package index to reach. The browser client and the deal catalogues are inside
# the installed package (solrace/webclient, solrace/seeds: pyproject.toml), where the server finds
# them. Runs as the unprivileged user `solrace`; the master key's volume is /run/solrace.

# Build stage: wheels of the dependencies (a layer rebuilt only when pyproject.toml changes),
# then of solrace itself with no network (setuptools is already in the build venv).
FROM python:3.11-slim AS build
RUN python -m venv /build && /build/bin/pip install --no-cache-dir --quiet "setuptools>=77" wheel
WORKDIR /src
COPY pyproject.toml ./
RUN /build/bin/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" >requirements.txt \
 && /build/bin/pip wheel --no-cache-dir --quiet --wheel-dir /wheels/deps -r requirements.txt
COPY README.md ./
COPY shared shared
COPY server server
COPY client client
COPY seeds/catalogue seeds/catalogue
RUN /build/bin/pip wheel --no-cache-dir --quiet --no-deps --no-build-isolation --wheel-dir /wheels/app .

FROM python:3.11-slim
RUN groupadd --system --gid 10001 solrace \
 && useradd --system --uid 10001 --gid solrace --home-dir /var/lib/solrace --create-home \
      --shell /usr/sbin/nologin solrace \
 && install -d -o solrace -g solrace -m 0700 /run/solrace
COPY --from=build /wheels/deps /wheels/deps
RUN python -m venv /opt/solrace \
 && /opt/solrace/bin/pip install --no-cache-dir --quiet --no-index /wheels/deps/*.whl \
 && rm -rf /wheels
COPY --from=build /wheels/app /wheels/app
RUN /opt/solrace/bin/pip install --no-cache-dir --quiet --no-index --no-deps /wheels/app/*.whl \
 && rm -rf /wheels
LABEL org.solrace.image="server"
ENV PATH=/opt/solrace/bin:$PATH PYTHONUNBUFFERED=1
USER solrace
WORKDIR /var/lib/solrace
# A fresh named volume mounted here takes this directory's owner (solrace) and mode (0700).
VOLUME /run/solrace
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=2)"]
CMD ["solrace", "serve", "--host", "0.0.0.0", "--port", "8080"]
