# nginx in front of the eventlet glance-api (api.mode: proxy).
{{- $p := .Values.conf.glance_api_proxy }}
worker_processes {{ $p.worker_processes }};
pid /tmp/nginx.pid;
error_log /dev/stderr warn;

events {
    worker_connections {{ $p.worker_connections }};
}

http {
    access_log /dev/stdout;
    client_body_temp_path /tmp/client_body;
    proxy_temp_path /tmp/proxy;
    fastcgi_temp_path /tmp/fastcgi;
    uwsgi_temp_path /tmp/uwsgi;
    scgi_temp_path /tmp/scgi;

    upstream glance_api {
        server 127.0.0.1:{{ .Values.api.backend_port }};
    }

    server {
        listen {{ include "toolkit.endpoint.port" (dict "ctx" . "type" "image" "scope" "internal") }};
        client_max_body_size {{ $p.client_max_body_size }};
        # Stream image data both ways instead of spooling it to disk.
        proxy_request_buffering off;
        proxy_buffering off;
        proxy_http_version 1.1;
        proxy_read_timeout {{ $p.proxy_read_timeout }};
        proxy_send_timeout {{ $p.proxy_send_timeout }};

        location / {
            proxy_pass http://glance_api;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }
    }
}
