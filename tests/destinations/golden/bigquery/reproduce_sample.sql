SELECT `payload_size`, `loaded_at`, `_dlt_load_id` FROM `acme-analytics-42`.`raw_events`.`events` WHERE NOT `payload_size` IS NULL ORDER BY `loaded_at` DESC, `_dlt_id` LIMIT 5
