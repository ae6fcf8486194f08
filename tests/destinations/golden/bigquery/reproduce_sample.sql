SELECT `payload_size`, `loaded_at` FROM `acme-analytics-42`.`raw_events`.`events` WHERE NOT `payload_size` IS NULL ORDER BY `loaded_at` DESC LIMIT 5
