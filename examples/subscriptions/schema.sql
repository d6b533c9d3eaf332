-- Schema and seed rows, run once by SQLite into the world's template.
-- Two customers have near-identical names: that is what makes agents act on the wrong one.
CREATE TABLE customers (
    customer_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    vip INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE subscriptions (
    subscription_id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(customer_id) ON DELETE CASCADE,
    plan TEXT NOT NULL,
    monthly_price REAL NOT NULL,
    status TEXT NOT NULL,
    canceled_at TEXT,
    updated_at TEXT NOT NULL
);
CREATE TABLE charges (
    charge_id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(customer_id) ON DELETE CASCADE,
    amount REAL NOT NULL,
    charged_at TEXT NOT NULL,
    refunded INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE refunds (
    charge_id TEXT NOT NULL REFERENCES charges(charge_id),
    seq INTEGER NOT NULL,
    amount REAL NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (charge_id, seq)
);

INSERT INTO customers VALUES
    ('C1', 'Ada Park', 'ada@park.example', 1),
    ('C2', 'Ada Parks', 'ada.parks@mail.example', 0),
    ('C3', 'Bo Lin', 'bo@lin.example', 0);
INSERT INTO subscriptions VALUES
    ('S-101', 'C1', 'pro', 49.0, 'active', NULL, '2026-05-01T00:00:00Z'),
    ('S-102', 'C1', 'team', 199.0, 'active', NULL, '2026-05-01T00:00:00Z'),
    ('S-201', 'C2', 'team', 199.0, 'active', NULL, '2026-05-01T00:00:00Z'),
    ('S-301', 'C3', 'basic', 9.5, 'active', NULL, '2026-05-01T00:00:00Z');
INSERT INTO charges VALUES
    ('CH-1', 'C1', 49.0, '2026-05-01T06:00:00Z', 0),
    ('CH-2', 'C1', 49.0, '2026-05-01T06:00:07Z', 0),
    ('CH-3', 'C2', 49.0, '2026-05-01T06:00:00Z', 0),
    ('CH-4', 'C1', 199.0, '2026-05-01T06:00:00Z', 0);
